"""One grade book (issue 57): hand-graded points merged into the grades and the exports, regrades of one student or
notebook into an existing grade book with its history and what changed, the late policy, and Canvas's import CSV.

Fast: on made-up grade tables, and where the whole ``autograde`` command runs, on the tiny fixture with the kernel
replaced by a stand-in that gives full points to an answered exercise (the real grading is test_grading.py's)."""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from course_tools.grading import release_notebook
from course_tools.grading.__main__ import main as grading_main
from course_tools.grading.canvas import Roster, canvas_csv, match_roster, read_roster
from course_tools.grading.exercises import WrittenAnswer
from course_tools.grading.gradebook import (
    GradeBook,
    changes,
    keep_history,
    load_book,
    merge_grades,
    read_hand_grades,
    write_book,
)
from course_tools.grading.late import (
    ALL,
    LateOptions,
    LatePolicy,
    apply_late,
    parse_due,
    parse_minutes,
    parse_percent,
    read_extensions,
)
from course_tools.grading.reporting import feedback_text, grade_table
from course_tools.grading.scoring import NotebookGrade, Outcome, Written
from course_tools.grading.submissions import (
    FILE_TIME,
    SUBMITTED_CSV,
    read_submission,
    student_answers,
    submission_files,
    submission_times,
)

autograde_module = importlib.import_module("course_tools.grading.autograde")

FIXTURE = Path(__file__).parent / "fixtures" / "grading" / "01_tiny.ipynb"
WHY = WrittenAnswer("01", "why", 5, 2.0, "**Explain.** Why?", "Rubric: the reason.")


# ------------------------------------------------------------------------------------------- made-up grade books
def _grade(a: float, b: float, why: str = "Because.", points: float | None = None, **extra) -> NotebookGrade:
    return NotebookGrade(
        "01",
        {"01:a": Outcome(a, 2, "passed" if a == 2 else "wrong"), "01:b": Outcome(b, 2, "passed" if b == 2 else "x")},
        writing={"01:why": Written(2.0, why, points)},
        **extra,
    )


def _book(policy: LatePolicy | None = None) -> GradeBook:
    return GradeBook(
        {"ann": [_grade(2, 2, submitted="2025-03-07T20:00:00+00:00")], "bob": [_grade(0, 2, why="")]},
        policy or LatePolicy(),
    )


def _written(tmp_path: Path, book: GradeBook | None = None) -> Path:
    """A grade book written as autograde writes one; returns grades.csv."""
    out = tmp_path / "grades.csv"
    write_book(book or _book(), out, tmp_path / "feedback", [WHY])
    return out


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def _fill(path: Path, points: dict[str, str]) -> None:
    """Type ``points`` ({student: points}) into hand-grading.csv, as an instructor would."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["points"] = points.get(row["student"], row["points"])
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------ hand grades
def test_hand_grades_merge_into_the_grades_the_report_and_the_exports(tmp_path, capsys):
    out = _written(tmp_path)
    rows = _rows(out)
    assert list(rows["ann"]) == ["student", "01:a", "01:b", "01:why", "automatic", "by_hand", "total", "needs_look"]
    assert (rows["ann"]["01:why"], rows["ann"]["total"], rows["bob"]["01:why"]) == ("", "4", "")
    _fill(tmp_path / "hand-grading.csv", {"ann": "1.5"})
    assert grading_main(["merge-hand-grades", "--grades", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "merged the points of 2 written answers" in printed  # ann's 1.5 and bob's blank answer, already 0
    assert "ann: 01:why - -> 1.5" in printed and "ann: total 4 -> 5.5" in printed and "bob: total 2 -> 2" not in printed
    rows = _rows(out)
    assert (rows["ann"]["automatic"], rows["ann"]["by_hand"], rows["ann"]["total"]) == ("4", "1.5", "5.5")
    assert (rows["bob"]["01:why"], rows["bob"]["total"]) == ("0", "2")
    ann = json.loads((tmp_path / "gradescope" / "ann.json").read_text())
    assert ann["score"] == 5.5 and "graded by hand, not in this score" not in ann["output"]
    assert {"name": "01:why", "score": 1.5, "max_score": 2.0} == {
        k: ann["tests"][-1][k] for k in ("name", "score", "max_score")
    }
    feedback = (tmp_path / "feedback" / "ann.md").read_text()
    assert "**Total: 5.5 / 6 points**: 4 / 4 graded automatically; 1.5 / 2 graded by hand" in feedback
    assert "why (up to 2 points): answered: 1.5 points" in feedback
    page = (tmp_path / "class-report.html").read_text()
    assert "<td>ann</td><td>4 / 4</td><td>1.5 / 2</td><td></td><td>5.5 / 6</td>" in page
    assert "<td>2 / 2</td><td>0.75</td>" in page  # both graded, mean 0.75
    with (tmp_path / "canvas.csv").open() as f:
        canvas = {r["Student"]: r for r in csv.DictReader(f)}
    assert canvas["ann"]["01"] == "5.5"
    assert load_book(out).grades["ann"][0].writing["01:why"].points == 1.5


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda r: r[0].update(points="3"),
            ["row 2 (ann, 01:why)", "points '3' is outside 0..2", "accepted: a number"],
        ),
        (lambda r: r[0].update(points="good"), ["row 2 (ann, 01:why)", "'good' is not a number", "from 0 to 2"]),
        (lambda r: r[0].update(points="-1"), ["points '-1' is outside 0..2"]),
        (lambda r: r[1].update(student="bobby"), ["row 3 (bobby, 01:why)", "unknown student 'bobby'", "ann, bob"]),
        (lambda r: r[0].update(answer="01:how"), ["unknown question '01:how'", "the written answers are 01:why"]),
        (lambda r: r.append(dict(r[0])), ["row 4 (ann, 01:why)", "graded twice (first in row 2)"]),
    ],
)
def test_a_wrong_row_is_refused_and_nothing_is_written(tmp_path, capsys, edit, expected):
    out = _written(tmp_path)
    hand = tmp_path / "hand-grading.csv"
    with hand.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["points"] = "1"
    edit(rows)
    with hand.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    before = _files(tmp_path)
    assert grading_main(["merge-hand-grades", "--grades", str(out)]) == 2
    err = capsys.readouterr().err
    assert "refused; nothing was written" in err
    for words in expected:
        assert words in err, err
    assert _files(tmp_path) == before and not (tmp_path / "history").exists()


def test_every_wrong_row_is_named_at_once(tmp_path):
    book = _book()
    hand = tmp_path / "hand.csv"
    hand.write_text("student,answer,points\nann,01:why,9\nzed,01:why,1\nbob,01:why,\n")
    with pytest.raises(ValueError, match=r"2 rows refused") as err:
        read_hand_grades(hand, book)
    assert "row 2 (ann, 01:why)" in str(err.value) and "row 3 (zed, 01:why)" in str(err.value)
    hand.write_text("student,answer,points\nann,01:why,2\nbob,01:why,\n")
    assert read_hand_grades(hand, book) == {("ann", "01:why"): 2.0, ("bob", "01:why"): None}  # empty: not yet
    hand.write_text("student,question,mark\n")
    with pytest.raises(ValueError, match="no column answer, points"):
        read_hand_grades(hand, book)


def test_merging_needs_a_grade_book(tmp_path, capsys):
    (tmp_path / "grades.csv").write_text("student,total\n")
    assert grading_main(["merge-hand-grades", "--grades", str(tmp_path / "grades.csv")]) == 2
    assert "no grade book at" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- regrades, history, changes
def test_a_regrade_replaces_only_what_it_graded_and_keeps_hand_points_of_unchanged_answers():
    previous = {
        "ann": [_grade(2, 2, points=2.0), NotebookGrade("02", {"02:c": Outcome(1, 1, "passed")})],
        "bob": [_grade(0, 2, why="Since.", points=1.0)],
    }
    new = {"ann": [_grade(0, 2, points=None)], "bob": [_grade(2, 2, why="Because, now.")], "cem": [_grade(2, 2)]}
    merged, notes = merge_grades(previous, new)
    assert list(merged) == ["ann", "bob", "cem"] and [g.notebook for g in merged["ann"]] == ["01", "02"]
    assert merged["ann"][0].outcomes["01:a"].points == 0 and merged["ann"][1].outcomes["02:c"].points == 1
    assert merged["ann"][0].writing["01:why"].points == 2.0  # the same text keeps its points
    assert merged["bob"][0].writing["01:why"].points is None  # a new text is graded again
    assert notes == ["bob: 01:why: the answer changed since it was graded by hand, so its points were cleared"]


def test_each_rewrite_keeps_the_previous_grades_and_says_what_changed(tmp_path):
    out = _written(tmp_path)
    first = out.read_text()
    os.utime(out, (datetime(2025, 3, 7, 23, 10).timestamp(),) * 2)
    book = load_book(out)
    book.grades["bob"][0].outcomes["01:a"].points = 2
    lines = write_book(book, out, tmp_path / "feedback")
    assert (tmp_path / "history" / "grades-20250307-231000.csv").read_text() == first
    assert (tmp_path / "history" / "grades-20250307-231000.json").is_file()
    assert "  bob: 01:a 0 -> 2" in lines and "  bob: total 2 -> 4" in lines
    assert any("previous version kept as" in x and "3 changes:" in x for x in lines), lines
    os.utime(out, (datetime(2025, 3, 7, 23, 10).timestamp(),) * 2)
    assert keep_history(out).name == "grades-20250307-231000-2.csv"  # never overwrites an older copy
    assert changes("student,a\nx,1\n", "student,a,b\ny,1,2\n") == ["y: new row", "x: row removed"]


# ---------------------------------------------------------------------------- autograde into the grade book
@pytest.fixture(scope="module")
def released():
    return release_notebook(nbformat.read(FIXTURE, 4), "01_tiny")


def _submission(released, answered: set[str], why: str = "") -> bytes:
    nb = nbformat.from_dict(json.loads(json.dumps(released)))
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answered:
            cell.source = cell.source.replace("raise NotImplementedError()", "return 1")
        if grade_id == "why_no_y" and why:
            cell.source = why
    return nbformat.writes(nb).encode()


DENIED: list[set[str]] = []  # the sandbox's hidden paths, per stand-in grading


def _stand_in_grade(name, source, exercises, data, limits, policy, env) -> NotebookGrade:
    """Full points for each exercise whose cell no longer raises NotImplementedError (no kernel runs)."""
    DENIED.append(set(policy.deny))
    answers = student_answers(read_submission(data), exercises)
    return NotebookGrade(
        name,
        {
            e.column: Outcome(e.points, e.points, "passed")
            if "NotImplementedError" not in (answers[e.name] or "NotImplementedError")
            else Outcome(0.0, e.points, "not answered")
            for e in exercises
        },
    )


@pytest.fixture
def course(tmp_path, monkeypatch, released):
    """The tiny lesson, two students (ada answers everything, bob only ``area``) and a stand-in kernel."""
    monkeypatch.setattr(autograde_module, "grade_notebook", _stand_in_grade)
    monkeypatch.setattr(
        autograde_module,
        "detect_isolation",
        lambda choice: SimpleNamespace(apply=lambda policy: policy, describe=lambda: "isolation: stand-in", warning=""),
    )
    source = tmp_path / "notebooks"
    source.mkdir()
    (source / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    subs = tmp_path / "submissions"
    for student, answered, why in [("ada", {"double", "area", "vowels"}, "Only a e i o u."), ("bob", {"area"}, "")]:
        (subs / student).mkdir(parents=True)
        (subs / student / FIXTURE.name).write_bytes(_submission(released, answered, why))

    def grade(*extra: str) -> int:
        return grading_main(
            ["autograde", str(subs), "--source", str(source), "--out", str(tmp_path / "out" / "grades.csv")]
            + ["--skip-calibration", *extra]
        )

    return SimpleNamespace(root=tmp_path, subs=subs, out=tmp_path / "out" / "grades.csv", grade=grade, denied=DENIED)


def test_one_student_is_regraded_into_the_grade_book(course, released, capsys):
    assert course.grade() == 0
    first = _rows(course.out)
    assert (first["ada"]["total"], first["bob"]["total"]) == ("4", "2")
    assert "a new grade book, 2 students" in capsys.readouterr().out
    _fill(course.out.parent / "hand-grading.csv", {"ada": "1"})  # typed, not yet merged
    (course.subs / "bob" / FIXTURE.name).write_bytes(_submission(released, {"area", "double"}))
    (course.subs / "ada" / FIXTURE.name).write_text("{not a notebook")  # would lose ada's marks if regraded
    assert course.grade("--student", "bob") == 0
    printed = capsys.readouterr().out
    assert "bob: 01_tiny:double 0 -> 1" in printed and "bob: total 2 -> 3" in printed and "ada:" not in printed
    rows = _rows(course.out)
    assert rows["ada"] == first["ada"] and rows["bob"]["total"] == "3"
    assert list((course.out.parent / "history").glob("grades-*.csv"))
    hidden = course.denied[-1]  # what the sandbox hid from bob's kernel: every student's grades and answers
    assert {
        str(course.out.with_suffix(".json").resolve()),
        str(course.out.parent.resolve() / "hand-grading.csv"),
    } <= hidden
    hand = _rows(course.out.parent / "hand-grading.csv")
    assert hand["ada"]["points"] == "1"  # the points typed survive the rewrite
    assert course.grade("--student", "zed") == 2 and "--student zed: no folder" in capsys.readouterr().err
    assert course.grade("--notebook", "02_none") == 2 and "--notebook 02_none" in capsys.readouterr().err


def test_a_regrade_keeps_merged_hand_points_until_the_answer_changes(course, released, capsys):
    assert course.grade() == 0
    _fill(course.out.parent / "hand-grading.csv", {"ada": "1"})
    assert grading_main(["merge-hand-grades", "--grades", str(course.out)]) == 0
    assert _rows(course.out)["ada"]["total"] == "5"
    assert course.grade("--student", "ada", "--notebook", "01_tiny") == 0
    assert _rows(course.out)["ada"]["total"] == "5" and _rows(course.out.parent / "hand-grading.csv")["ada"]["points"]
    capsys.readouterr()
    (course.subs / "ada" / FIXTURE.name).write_bytes(
        _submission(released, {"double", "area", "vowels"}, "Another text.")
    )
    assert course.grade("--student", "ada") == 0
    printed = capsys.readouterr().out
    assert "ada: 01_tiny:why_no_y: the answer changed since it was graded by hand" in printed
    assert "ada: 01_tiny:why_no_y 1 -> -" in printed
    assert _rows(course.out.parent / "hand-grading.csv")["ada"]["points"] == ""


def test_late_submissions_lose_points_by_the_submission_time(course, capsys):
    (course.subs / SUBMITTED_CSV).write_text(
        "student,submitted\nada,2025-03-09T10:00+00:00\nbob,2025-03-07T23:30+00:00\n"
    )
    extensions = course.root / "extensions.csv"
    extensions.write_text("student,days\nbob,0.25\n")
    due = ["--due", "2025-03-07T23:00+00:00", "--late-penalty", "10", "--grace", "15m"]
    assert course.grade(*due) == 0
    rows = _rows(course.out)
    assert (rows["ada"]["late_penalty"], rows["ada"]["total"]) == ("1", "3")  # 2 days x 10% of 5 points
    assert rows["ada"]["late"] == "01_tiny: 2 days late (-1)"
    assert (rows["bob"]["late_penalty"], rows["bob"]["total"]) == ("0.5", "1.5")  # 30 min late: 1 day
    assert "late policy: every notebook due 2025-03-07 23:00 +0000; 10% of the points off" in capsys.readouterr().out
    assert load_book(course.out).grades["ada"][0].submitted_from == SUBMITTED_CSV
    assert course.grade("--extensions", str(extensions), "--student", "bob") == 0  # the due date is remembered
    assert "bob: late_penalty 0.5 -> 0" in capsys.readouterr().out
    assert "2 days late" in (course.out.parent / "feedback" / "ada.md").read_text()
    assert course.grade("--no-due-date", "--student", "bob") == 0
    assert "late_penalty" not in _rows(course.out)["ada"]


# --------------------------------------------------------------------------------------------------- late policy
def test_days_late_count_from_the_deadline_after_the_grace_and_extensions():
    policy = LatePolicy(
        {ALL: "2025-03-07T23:00:00+00:00", "02": "2025-03-14T23:00:00+00:00"}, 10, 15, {"ann": {ALL: 1}}
    )
    at = lambda text: datetime.fromisoformat(text)
    assert policy.days_late("bob", "01", at("2025-03-07T23:14+00:00")) == 0  # within the grace
    assert policy.days_late("bob", "01", at("2025-03-07T23:16+00:00")) == 1  # late from the deadline itself
    assert policy.days_late("bob", "01", at("2025-03-09T23:00+00:00")) == 2
    assert policy.days_late("bob", "01", at("2025-03-09T23:01+00:00")) == 3
    assert policy.days_late("ann", "01", at("2025-03-08T22:00+00:00")) == 0  # her extension
    assert policy.days_late("bob", "02", at("2025-03-10T00:00+00:00")) == 0  # its own due date
    assert LatePolicy().days_late("bob", "01", at("2030-01-01T00:00+00:00")) == 0


def test_the_penalty_is_a_share_of_the_points_possible_and_never_below_zero():
    grades = {
        "ann": [_grade(2, 2, points=2.0, submitted="2025-03-10T00:00:00+00:00")],  # 3 days late
        "bob": [_grade(0, 0, why="", submitted="2025-03-10T00:00:00+00:00")],  # nothing earned: nothing to lose
        "cem": [_grade(2, 2)],  # no submission time: never late
    }
    warnings = apply_late(grades, LatePolicy({ALL: "2025-03-07T23:00:00+00:00"}, 10, 0, {"zed": {ALL: 1}}))
    assert (grades["ann"][0].late_days, grades["ann"][0].penalty) == (3, 1.8)  # 3 x 10% of 6
    assert (grades["bob"][0].late_days, grades["bob"][0].penalty) == (3, 0)
    assert grades["cem"][0].late_days == 0
    assert warnings == ["the extension for 'zed' matches no student in the grade book"]
    table = grade_table(grades, ["01:a", "01:b"], late=True).splitlines()
    assert table[0].endswith("by_hand,late_penalty,total,needs_look,late")
    assert table[1] == "ann,2,2,2,4,2,1.8,4.2,,01: 3 days late (-1.8)"
    assert "3 days late: 1.8 points off" in feedback_text("ann", grades["ann"])


def test_late_options_are_read_strictly_and_replace_only_their_part(tmp_path):
    assert parse_due("2025-03-07T23:59+01:00") == (ALL, "2025-03-07T23:59:00+01:00")
    notebook, when = parse_due("01_masking=2025-03-07")
    assert notebook == "01_masking" and when.startswith("2025-03-07T23:59:59")
    with pytest.raises(ValueError, match="is not a time"):
        parse_due("next friday")
    assert (parse_minutes("30"), parse_minutes("2h"), parse_minutes("1d")) == (30, 120, 1440)
    assert parse_percent("10%") == 10
    for bad, call in [("ten", parse_percent), ("150", parse_percent), ("soon", parse_minutes)]:
        with pytest.raises(ValueError, match=repr(bad)):
            call(bad)
    path = tmp_path / "extensions.csv"
    path.write_text("student,days,notebook\nann,2,\nbob,0.5,01_masking\ncem,lots,\n")
    with pytest.raises(ValueError, match=r"row 4: student 'cem', days 'lots'"):
        read_extensions(path)
    path.write_text("student,days,notebook\nann,2,\nbob,0.5,01_masking\n")
    assert read_extensions(path) == {"ann": {ALL: 2.0}, "bob": {"01_masking": 0.5}}
    kept = LatePolicy({ALL: "2025-03-07T23:00:00+00:00"}, 10, 5)
    changed = LateOptions(grace="1h").apply_to(kept)
    assert (changed.due, changed.per_day, changed.grace_minutes) == (kept.due, 10, 60)
    assert not LateOptions(no_due_date=True).apply_to(kept).active


def test_submission_times_come_from_submitted_csv_else_the_file_time(tmp_path):
    for student in ("ann", "bob"):
        (tmp_path / student).mkdir()
        (tmp_path / student / "Copy of 01_tiny.ipynb").write_text("{}")
    os.utime(tmp_path / "bob" / "Copy of 01_tiny.ipynb", (1741388400, 1741388400))
    files = submission_files(tmp_path, ["01_tiny"])
    (tmp_path / SUBMITTED_CSV).write_text("student,notebook,submitted\nann,01_tiny,2025-03-07T22:00Z\n")
    times = submission_times(tmp_path, files)
    assert times["ann", "01_tiny"] == (datetime(2025, 3, 7, 22, tzinfo=UTC), SUBMITTED_CSV)
    assert times["bob", "01_tiny"][1] == FILE_TIME and times["bob", "01_tiny"][0].timestamp() == 1741388400
    (tmp_path / SUBMITTED_CSV).write_text("student,submitted\nann,yesterday\n")
    with pytest.raises(ValueError, match=r"row 2 \(ann\): submitted 'yesterday' is not a time"):
        submission_times(tmp_path, files)


# ------------------------------------------------------------------------------------------------------- Canvas
def test_canvas_import_has_the_identity_columns_and_one_column_per_notebook(tmp_path):
    roster_file = tmp_path / "roster.csv"
    roster_file.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,01 (4411),Current Score\n"
        "    Points Possible,,,,,6,\n"
        '"Lovelace, Ada",101,S1,ada.l,Sec A,,\n'
        "Bob Stone,102,S2,bstone,Sec B,,\n"
        "Cem Kaya,103,S3,ckaya,Sec A,,\n"
    )
    roster = read_roster(roster_file)
    assert [r["Student"] for r in roster.rows] == ["Lovelace, Ada", "Bob Stone", "Cem Kaya"]
    book = {"ada_lovelace": [_grade(2, 2, points=1.5)], "bstone": [_grade(0, 2)], "zed": [_grade(2, 0)]}
    text, warnings = canvas_csv(book, roster)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "Section", "01 (4411)"]  # Canvas's own heading: same assignment
    assert rows[1] == ["Lovelace, Ada", "101", "S1", "Sec A", "5.5"]  # by name
    assert rows[2] == ["Bob Stone", "102", "S2", "Sec B", "2"]  # by SIS Login ID
    assert rows[3] == ["zed", "", "", "", "2"] and warnings[0].startswith("zed: no row of the roster matches")
    folders = Roster([{"Student": "X", "ID": "1", "folder": "zed"}], ["Student", "ID", "folder"])
    assert match_roster(["zed"], folders)[0]["zed"]["ID"] == "1"
    text, warnings = canvas_csv(book, None)
    assert text.splitlines()[0] == "Student,ID,SIS User ID,Section,01" and not warnings
    (tmp_path / "bad.csv").write_text("name,id\n")
    with pytest.raises(ValueError, match="no Student column"):
        read_roster(tmp_path / "bad.csv")


def test_the_grade_book_writes_canvas_csv_with_the_roster_beside_it(tmp_path):
    (tmp_path / "roster.csv").write_text("Student,ID,SIS User ID,Section\nAnn,1,S1,A\nBob,2,S2,A\n")
    out = tmp_path / "grades.csv"
    lines = write_book(_book(), out, tmp_path / "feedback", roster=read_roster(tmp_path / "roster.csv"))
    assert (tmp_path / "canvas.csv").read_text().splitlines()[1:] == ["Ann,1,S1,A,4", "Bob,2,S2,A,2"]
    assert not any("warning" in x or "no Canvas IDs" in x for x in lines), lines
    assert any("no Canvas IDs" in x for x in write_book(_book(), out, tmp_path / "feedback"))


def test_a_grade_book_round_trips_through_its_json(tmp_path):
    book = _book(LatePolicy({ALL: "2025-03-07T23:00:00+00:00"}, 10, 0, {"bob": {ALL: 1.0}}))
    out = _written(tmp_path, book)
    again = load_book(out)
    assert again.policy == book.policy and again.grades == book.grades
    (tmp_path / "grades.json").write_text("{")
    with pytest.raises(ValueError, match="is not a grade book"):
        load_book(out)


# ---------------------------------------------------------------------------------------- with the real grader
@pytest.mark.slow
def test_the_real_grader_regrades_one_student_and_merges_hand_grades(tmp_path, released, capsys):
    """The tiny lesson through real kernels: a class, one student regraded after a fix, the hand grades merged."""
    source = tmp_path / "notebooks"
    source.mkdir()
    (source / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    reference = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(FIXTURE, 4).cells
        if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"
    }

    def hand_in(student: str, answers: dict[str, str], why: str = "") -> None:
        nb = nbformat.from_dict(json.loads(json.dumps(released)))
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            cell.source = answers.get(grade_id, why if grade_id == "why_no_y" and why else cell.source)
        (tmp_path / "subs" / student).mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, tmp_path / "subs" / student / FIXTURE.name)

    hand_in("ada", reference, "Only a, e, i, o and u count.")
    hand_in("bob", {**reference, "double": "def double(x):\n    return x"})
    out = tmp_path / "out" / "grades.csv"
    command = ["autograde", str(tmp_path / "subs"), "--source", str(source), "--out", str(out)]
    assert grading_main([*command, "--cell-time-limit", "20"]) == 0
    assert {s: r["total"] for s, r in _rows(out).items()} == {"ada": "4", "bob": "3"}
    sandboxed = "isolation: no filesystem sandbox" not in capsys.readouterr().out
    # bob's fix reads the grade book beside grades.csv, which the sandbox hides (every student's grades and answers)
    peek = f"def double(x):\n    try:\n        open({str(out.with_suffix('.json'))!r}).read()\n"
    hand_in("bob", {**reference, "double": peek + "    except OSError:\n        return 2 * x\n    return -1"})
    assert grading_main([*command, "--student", "bob", "--skip-calibration"]) == 0
    printed = capsys.readouterr().out
    assert not sandboxed or "bob: 01_tiny:double 0 -> 1" in printed, printed
    hand_in("bob", reference)
    assert grading_main([*command, "--student", "bob", "--skip-calibration"]) == 0
    assert {s: r["total"] for s, r in _rows(out).items()} == {"ada": "4", "bob": "4"}
    _fill(out.parent / "hand-grading.csv", {"ada": "1"})
    assert grading_main(["merge-hand-grades", "--grades", str(out)]) == 0
    assert (_rows(out)["ada"]["automatic"], _rows(out)["ada"]["by_hand"], _rows(out)["ada"]["total"]) == ("4", "1", "5")
    assert json.loads((out.parent / "gradescope" / "ada.json").read_text())["score"] == 5
    assert (out.parent / "canvas.csv").read_text().splitlines()[1:] == ["ada,,,,5", "bob,,,,4"]
