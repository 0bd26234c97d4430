"""Reporting grades: the grade table (CSV), each student's totals, and their feedback (Markdown)."""

from __future__ import annotations

import csv
import io

from .scoring import NotebookGrade


def grade_table(grades: dict[str, list[NotebookGrade]], columns: list[str]) -> str:
    """CSV text: one row per student, one column per exercise (points), then the total."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", *columns, "total", "needs_look"])
    for student, notebooks in grades.items():
        points = {k: o.points for g in notebooks for k, o in g.outcomes.items()}
        look = "; ".join(f"{g.notebook}: lesson {e}" for g in notebooks for e in g.lesson_errors)
        writer.writerow([student, *(f"{points.get(c, 0.0):g}" for c in columns), f"{sum(points.values()):g}", look])
    return buffer.getvalue()


def totals(notebooks: list[NotebookGrade]) -> tuple[float, float]:
    """(points earned, points possible) over a student's graded notebooks."""
    return sum(g.points[0] for g in notebooks), sum(g.points[1] for g in notebooks)


def feedback_text(student: str, notebooks: list[NotebookGrade]) -> str:
    """A student's feedback in Markdown: each exercise's points and why."""
    total, possible = totals(notebooks)
    lines = [f"# Feedback for {student}", "", f"**Total: {total:g} / {possible:g} points**", ""]
    if any(g.needs_look for g in notebooks):
        lines += [
            "**A cell of the lesson itself failed** while your notebook was graded (see the notes below). That "
            "is likely a grading problem rather than your code, so some points may be missing for a reason that "
            "is not yours: your instructor has been told to look at this grade.",
            "",
        ]
    for grade in notebooks:
        lines += [f"## {grade.notebook}", "", "| exercise | points | |", "|---|---|---|"]
        for column, outcome in grade.outcomes.items():
            reason = outcome.reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {column.split(':', 1)[1]} | {outcome.points:g} / {outcome.max_points:g} | {reason} |")
        if grade.notes:
            lines += ["", "Notes:", *(f"- {n}" for n in grade.notes)]
        lines.append("")
    return "\n".join(lines)
