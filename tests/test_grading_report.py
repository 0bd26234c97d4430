"""The class report and the exports an instructor acts on after a batch (issue 40): fast, on made-up grades; the
hostile batch in test_grading.py checks the same files from a real run."""

from __future__ import annotations

import base64
import csv
import io
import json

from course_tools.grading.exercises import WrittenAnswer
from course_tools.grading.reporting import (
    batch_counts,
    class_report_html,
    class_summary,
    class_table,
    feedback_text,
    grade_table,
    gradescope_results,
    hand_grading_csv,
    hand_grading_markdown,
    needs_a_look,
    writing_summary,
)
from course_tools.grading.scoring import NotebookGrade, Outcome, Written
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


def test_written_answers_are_listed_for_the_instructor_and_kept_out_of_the_score():
    """A written answer is graded by hand: it never counts in the automatic score, its text reaches the instructor
    beside the rubric, and a blank one is already 0."""
    question = WrittenAnswer("01", "why", 5, 2.0, "**Explain.** Why?", "Rubric: the reason.")
    grades = {
        "ann": [_grade(Outcome(2, 2, "passed"), Outcome(2, 2, "passed"), writing={"01:why": Written(2.0, "Because.")})],
        "bob": [_grade(Outcome(0, 2, "x"), Outcome(2, 2, "passed"), writing={"01:why": Written(2.0, "")})],
    }
    (row,) = writing_summary(grades)
    assert (row.column, row.max_points, row.students, row.answered) == ("01:why", 2.0, 2, 1)
    assert "01:why" in class_table(class_summary(grades, COLUMNS), batch_counts(grades), writing=[row])
    page = class_report_html(class_summary(grades, COLUMNS), batch_counts(grades), [], writing=[row])
    assert "To grade by hand" in page and "1 / 2" in page
    rows = list(csv.DictReader(io.StringIO(hand_grading_csv(grades, [question]))))
    assert [(r["student"], r["points"], r["text"]) for r in rows] == [("ann", "", "Because."), ("bob", "0", "")]
    text = hand_grading_markdown(grades, [question])
    assert "Rubric: the reason." in text and "> Because." in text and "left blank: 0 points" in text
    assert (
        gradescope_results(grades["ann"])["score"] == 4
        and "graded by hand" in gradescope_results(grades["ann"])["output"]
    )
    assert "why (up to 2 points): answered" in feedback_text("ann", grades["ann"])
    assert "left blank" in feedback_text("bob", grades["bob"])
