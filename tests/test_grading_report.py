"""The class report and the exports an instructor acts on after a batch (issue 40): fast, on made-up grades; the
hostile batch in test_grading.py checks the same files from a real run."""

from __future__ import annotations

import base64
import json

from course_tools.grading.reporting import (
    batch_counts,
    class_report_html,
    class_summary,
    class_table,
    grade_table,
    gradescope_results,
    needs_a_look,
)
from course_tools.grading.scoring import NotebookGrade, Outcome
from course_tools.grading.submissions import UNREADABLE

COLUMNS = ["01:a", "01:b"]


def _grade(a: Outcome, b: Outcome, **extra) -> NotebookGrade:
    return NotebookGrade("01", {"01:a": a, "01:b": b}, **extra)


def _class() -> dict[str, list[NotebookGrade]]:
    ok, wrong = Outcome(2, 2, "passed"), Outcome(0, 2, "double(2) should be 4")
    slow = Outcome(0, 2, "your code did not finish within its time limit (8 s per exercise cell)")
    return {
        "ann": [_grade(ok, ok)],
        "bob": [_grade(wrong, ok)],
        "cem": [_grade(wrong, slow, notes=["a note"])],
        "dee": [_grade(ok, Outcome(1, 2, "half"), lesson_errors=["cell 3 raised KeyError"])],
        "eve": [NotebookGrade("01", {c: Outcome(0, 2, "not submitted") for c in COLUMNS})],
        "fay": [NotebookGrade("01", {c: Outcome(0, 2, "grader error: RuntimeError: boom") for c in COLUMNS})],
    }


def test_the_summary_counts_who_earned_each_exercise_and_the_commonest_failure():
    a, b = class_summary(_class(), COLUMNS)
    assert (a.column, a.students, a.earned, a.top_failure, a.top_failure_count) == (
        "01:a",
        6,
        2,
        "double(2) should be 4",
        2,
    )
    assert a.share == 2 / 6 and a.mean_points == 4 / 6
    assert (b.earned, b.mean_points) == (2, 5 / 6)  # ann and bob; dee's half point is not "earned"
    assert class_summary({"x": [_grade(Outcome(2, 2, ""), Outcome(2, 2, ""))]}, COLUMNS)[0].top_failure == ""


def test_the_batch_counts_and_the_grades_that_need_a_look():
    counts = batch_counts(_class())
    assert (counts.graded, counts.not_submitted, counts.grader_errors, counts.timed_out) == (4, 1, 1, 1)
    corrupt = {
        "gil": [NotebookGrade("01", {c: Outcome(0, 2, f"{UNREADABLE} (JSONDecodeError: bad JSON)") for c in COLUMNS})]
    }
    assert (batch_counts(corrupt).unreadable, batch_counts(corrupt).graded) == (1, 0)
    look = {(s, why) for s, _, why in needs_a_look(_class())}
    assert look == {("cem", "time limit"), ("dee", "lesson cell 3 raised KeyError"), ("fay", "grader error")}


def test_the_terminal_table_and_the_page_say_the_same():
    summary, counts = class_summary(_class(), COLUMNS), batch_counts(_class())
    table = class_table(summary, counts)
    assert "graded 4, not submitted 1" in table and "01:a" in table and "2 x double(2) should be 4" in table
    page = class_report_html(summary, counts, needs_a_look(_class()))
    assert page.startswith("<!doctype html>") and "2 × double(2) should be 4" in page
    assert "cem · 01: time limit" in page and "<script" not in page
    png = base64.b64decode(page.split("base64,")[1].split("'")[0])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    hostile = {"<b>x</b>": [_grade(Outcome(0, 1, "<script>alert(1)</script>"), Outcome(1, 1, ""))]}
    assert "<script>alert" not in class_report_html(
        class_summary(hostile, COLUMNS), batch_counts(hostile), needs_a_look(hostile)
    )


def test_gradescope_results_hold_one_test_per_exercise_and_the_total():
    result = gradescope_results(_class()["cem"])
    json.dumps(result)  # serialisable as it is
    assert result["score"] == 0 and result["output"] == "01: a note"
    assert [t["name"] for t in result["tests"]] == COLUMNS
    first = result["tests"][0]
    assert (first["score"], first["max_score"], first["status"], first["visibility"]) == (0, 2, "failed", "visible")
    assert gradescope_results(_class()["ann"])["score"] == 4
    assert {t["status"] for t in gradescope_results(_class()["ann"])["tests"]} == {"passed"}


def test_the_grade_table_is_one_row_per_student_and_one_column_per_exercise():
    rows = grade_table(_class(), COLUMNS).splitlines()
    assert rows[0] == "student,01:a,01:b,total,needs_look"
    assert rows[1] == "ann,2,2,4," and rows[4].startswith("dee,2,1,3,01: lesson cell 3")
