"""Reporting grades: the grade table (CSV), each student's totals and feedback (Markdown), and for the instructor the
class report (per exercise: who earned it, the commonest failure; the grades that need a look; the batch's counts) as
a terminal table and an HTML page, and each submission in Gradescope's ``results.json`` format."""

from __future__ import annotations

import base64
import csv
import html
import io
from collections import Counter
from dataclasses import dataclass

from .exercises import WrittenAnswer
from .scoring import GRADER_ERROR, MEMORY_LIMIT, NOT_SUBMITTED, TIME_LIMIT, NotebookGrade
from .submissions import UNREADABLE


def grade_table(grades: dict[str, list[NotebookGrade]], columns: list[str], late: bool = False) -> str:
    """CSV text: one row per student, one column per exercise (points), then the total.

    Where the lessons ask for written answers, a column per answer follows the exercises (the points graded by hand,
    empty until merged from hand-grading.csv), then ``automatic`` and ``by_hand``, the two parts of the total. With a
    late policy (``late``), ``late_penalty`` (the points it took off) precedes the total and ``late`` (which notebook,
    how many days) ends the row. The total is automatic + by hand - late penalty."""
    written = list(dict.fromkeys(c for notebooks in grades.values() for g in notebooks for c in g.writing))
    header = ["student", *columns, *written, *(["automatic", "by_hand"] if written else [])]
    header += [*(["late_penalty"] if late else []), "total", "needs_look", *(["late"] if late else [])]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for student, notebooks in grades.items():
        points = {k: o.points for g in notebooks for k, o in g.outcomes.items()}
        hand = {k: w.points for g in notebooks for k, w in g.writing.items()}
        parts = grade_parts(notebooks)
        look = "; ".join(f"{g.notebook}: lesson {e}" for g in notebooks for e in g.lesson_errors)
        row = [student, *(f"{points.get(c, 0.0):g}" for c in columns)]
        row += ["" if hand.get(c) is None else f"{hand[c]:g}" for c in written]
        row += [f"{parts.automatic:g}", f"{parts.by_hand:g}"] if written else []
        row += [*([f"{parts.penalty:g}"] if late else []), f"{parts.total:g}", look]
        row += [late_text(notebooks)] if late else []
        writer.writerow(row)
    return buffer.getvalue()


def totals(notebooks: list[NotebookGrade]) -> tuple[float, float]:
    """(points earned, points possible) over a student's graded notebooks: the exercises graded automatically."""
    return sum(g.points[0] for g in notebooks), sum(g.points[1] for g in notebooks)


@dataclass
class Parts:
    """A student's grade in its parts: graded automatically, graded by hand (so far), and the late penalty."""

    automatic: float = 0.0
    automatic_max: float = 0.0
    by_hand: float = 0.0  # the written answers graded so far
    by_hand_max: float = 0.0  # every written answer's points, graded or not
    answers: int = 0  # written answers
    graded: int = 0  # of them, graded by hand so far
    penalty: float = 0.0  # points the late policy took off

    @property
    def total(self) -> float:
        return self.automatic + self.by_hand - self.penalty

    @property
    def possible(self) -> float:
        return self.automatic_max + self.by_hand_max


def grade_parts(notebooks: list[NotebookGrade]) -> Parts:
    """The parts of a student's grade over their notebooks (:class:`Parts`)."""
    written = [w for g in notebooks for w in g.writing.values()]
    auto, possible = totals(notebooks)
    return Parts(
        auto,
        possible,
        sum(w.points for w in written if w.points is not None),
        sum(w.max_points for w in written),
        len(written),
        sum(w.points is not None for w in written),
        sum(g.penalty for g in notebooks),
    )


def late_text(notebooks: list[NotebookGrade]) -> str:
    """``01_masking: 2 days late (-0.8)`` for each notebook handed in late; "" when none was."""
    return "; ".join(
        f"{g.notebook}: {g.late_days} day{'s' * (g.late_days != 1)} late (-{g.penalty:g})"
        for g in notebooks
        if g.late_days
    )


def _total_line(parts: Parts) -> str:
    """The feedback's first line: the total, and its parts where there is more than one."""
    line = f"**Total: {parts.total:g} / {parts.possible:g} points**"
    pieces = []
    if parts.answers:
        pieces.append(f"{parts.automatic:g} / {parts.automatic_max:g} graded automatically")
        still = parts.answers - parts.graded
        pieces.append(
            f"{parts.by_hand:g} / {parts.by_hand_max:g} graded by hand"
            + (f" ({still} written answer{'s' * (still != 1)} still to be graded)" if still else "")
        )
    if parts.penalty:
        pieces.append(f"{parts.penalty:g} off for handing in late")
    return line + (": " + "; ".join(pieces) if pieces else "")


def feedback_text(student: str, notebooks: list[NotebookGrade]) -> str:
    """A student's feedback in Markdown: each exercise's points and why."""
    lines = [f"# Feedback for {student}", "", _total_line(grade_parts(notebooks)), ""]
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
        if grade.writing:
            lines += ["", "Written answers, graded by hand by your instructor:", ""]
            for column, written in grade.writing.items():
                state = "answered" if written.text else "left blank: it earns nothing"
                if written.text:
                    state += " (not graded yet)" if written.points is None else f": {written.points:g} points"
                lines.append(f"- {column.split(':', 1)[1]} (up to {written.max_points:g} points): {state}")
        if grade.late_days:
            days = f"{grade.late_days} day{'s' * (grade.late_days != 1)}"
            lines += [
                "",
                f"Handed in {grade.submitted[:16].replace('T', ' ')}, {days} late: {grade.penalty:g} points off.",
            ]
        if grade.notes:
            lines += ["", "Notes:", *(f"- {n}" for n in grade.notes)]
        lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- grading by hand
# A written answer's points are the instructor's to give: the batch lists every answer beside its rubric and leaves
# a points column to fill; a blank answer is already 0.


@dataclass
class WritingSummary:
    """One written answer over the class: how many wrote something."""

    column: str
    max_points: float
    students: int
    answered: int
    graded: int = 0  # points merged from hand-grading.csv
    mean_points: float = 0.0  # over those graded


def writing_summary(grades: dict[str, list[NotebookGrade]]) -> list[WritingSummary]:
    """Per written answer: the students whose notebook was graded, how many of them wrote an answer, and how many
    answers were graded by hand (with their mean points)."""
    written = [(c, w) for notebooks in grades.values() for g in notebooks for c, w in g.writing.items()]
    rows = []
    for column in dict.fromkeys(c for c, _ in written):
        mine = [w for c, w in written if c == column]
        marks = [w.points for w in mine if w.points is not None]
        rows.append(
            WritingSummary(
                column,
                mine[0].max_points,
                len(mine),
                sum(bool(w.text) for w in mine),
                len(marks),
                sum(marks) / len(marks) if marks else 0.0,
            )
        )
    return rows


def hand_grading_csv(
    grades: dict[str, list[NotebookGrade]],
    questions: list[WrittenAnswer],
    filled: dict[tuple[str, str], str] | None = None,
) -> str:
    """CSV: one row per student and written answer (student, answer, max_points, points, text); ``points`` is left
    empty for the instructor, and is 0 where the answer was left blank. Points already given stay: those typed in
    ``filled`` (``{(student, column): points}``, from the file this one replaces), else those merged before."""
    filled = filled or {}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "answer", "max_points", "points", "text"])
    for student, notebooks in grades.items():
        writing = {c: w for g in notebooks for c, w in g.writing.items()}
        for q in questions:
            if q.column in writing:
                written = writing[q.column]
                points = "" if written.text else "0"
                points = points if written.points is None else f"{written.points:g}"
                points = filled.get((student, q.column), points)
                writer.writerow([student, q.column, f"{q.points:g}", points, written.text])
    return buffer.getvalue()


def hand_grading_markdown(grades: dict[str, list[NotebookGrade]], questions: list[WrittenAnswer]) -> str:
    """Markdown for reading the answers question by question: the question, the rubric, then each student's text."""
    lines = ["# Written answers to grade by hand", "", "Enter the points in `hand-grading.csv`.", ""]
    for q in questions:
        lines += [
            f"## {q.column} (up to {q.points:g} points)",
            "",
            "**Question.**",
            "",
            q.question.strip(),
            "",
            "**Rubric.**",
            "",
            q.rubric.strip(),
            "",
        ]
        for student, notebooks in grades.items():
            written = next((g.writing[q.column] for g in notebooks if q.column in g.writing), None)
            if written is not None:
                answer = "\n".join(f"> {line}" for line in written.text.splitlines()) or "> *(left blank: 0 points)*"
                lines += [f"### {student}", "", answer, ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ the class report
# What the instructor acts on after a batch: per exercise, how many earned it and why the others did not; which
# grades need a look; and the same grades in the formats an LMS imports (the CSV above; Gradescope's results.json).


@dataclass
class ExerciseSummary:
    """One exercise over the class: who earned its points, and the commonest reason of those who did not."""

    column: str  # "<notebook>:<exercise>"
    max_points: float
    students: int
    earned: int  # students with every point of it
    mean_points: float
    top_failure: str  # the commonest reason among those who missed points ("" when nobody did)
    top_failure_count: int

    @property
    def share(self) -> float:
        return self.earned / self.students if self.students else 0.0


@dataclass
class BatchCounts:
    """What happened to each (student, notebook) of a batch."""

    graded: int = 0  # ran and was scored (whatever the score)
    not_submitted: int = 0
    unreadable: int = 0  # handed in, but not a notebook
    timed_out: int = 0  # at least one exercise ran past a time limit
    grader_errors: int = 0  # the grader itself failed on it (zero, and the reason)


def batch_counts(grades: dict[str, list[NotebookGrade]]) -> BatchCounts:
    """Count, over every student's notebooks, how many were graded, not submitted, unreadable, timed out or hit a
    grader error (a notebook can be graded and have timed out in one exercise)."""
    counts = BatchCounts()
    for notebooks in grades.values():
        for grade in notebooks:
            reasons = [o.reason for o in grade.outcomes.values()]
            if reasons and all(r == NOT_SUBMITTED for r in reasons):
                counts.not_submitted += 1
            elif reasons and all(r.startswith(GRADER_ERROR) for r in reasons):
                counts.grader_errors += 1
            elif reasons and all(r == reasons[0] for r in reasons) and reasons[0].startswith(UNREADABLE):
                counts.unreadable += 1
            else:
                counts.graded += 1
            counts.timed_out += any(TIME_LIMIT in r for r in reasons)
    return counts


def class_summary(grades: dict[str, list[NotebookGrade]], columns: list[str]) -> list[ExerciseSummary]:
    """Per exercise column: students, how many earned every point, the mean points and the commonest failure."""
    rows = []
    for column in columns:
        outcomes = [g.outcomes[column] for notebooks in grades.values() for g in notebooks if column in g.outcomes]
        if not outcomes:
            continue
        missed = Counter(o.reason for o in outcomes if o.points < o.max_points)
        top, count = missed.most_common(1)[0] if missed else ("", 0)
        rows.append(
            ExerciseSummary(
                column,
                outcomes[0].max_points,
                len(outcomes),
                sum(o.points >= o.max_points for o in outcomes),
                sum(o.points for o in outcomes) / len(outcomes),
                top,
                count,
            )
        )
    return rows


def needs_a_look(grades: dict[str, list[NotebookGrade]]) -> list[tuple[str, str, str]]:
    """(student, notebook, why) for the grades an instructor should open: a lesson cell failed, the grader failed,
    or an exercise hit a time or memory limit (a slow but correct answer looks the same as an endless loop)."""
    out = []
    for student, notebooks in grades.items():
        for g in notebooks:
            why = [f"lesson {e}" for e in g.lesson_errors]
            why += sorted(
                {
                    label
                    for o in g.outcomes.values()
                    for label in (GRADER_ERROR, TIME_LIMIT, MEMORY_LIMIT)
                    if label in o.reason
                }
            )
            if why:
                out.append((student, g.notebook, "; ".join(why)))
    return out


def class_table(
    summary: list[ExerciseSummary], counts: BatchCounts, width: int = 60, writing: list[WritingSummary] = ()
) -> str:
    """The class report as plain text for the terminal; then the written answers left to grade by hand."""
    lines = [
        f"graded {counts.graded}, not submitted {counts.not_submitted}, unreadable {counts.unreadable}, "
        f"timed out (in some exercise) {counts.timed_out}, grader errors {counts.grader_errors}",
        "",
        f"{'exercise':<28} {'earned':>11}  commonest failure",
    ]
    for row in summary:
        failure = f"{row.top_failure_count} x {row.top_failure}" if row.top_failure else "-"
        failure = failure if len(failure) <= width else failure[: width - 3] + "..."
        lines.append(f"{row.column:<28} {row.earned:>3}/{row.students:<3} {row.share:>4.0%}  {failure}")
    if writing:
        lines += ["", f"{'to grade by hand':<28} {'answered':>11}  (hand-grading.csv, hand-grading.md)"]
        for w in writing:
            graded = f"; graded {w.graded}, mean {w.mean_points:.2f}" if w.graded else ""
            lines.append(
                f"{w.column:<28} {w.answered:>3}/{w.students:<3} {'':>4}  up to {w.max_points:g} points each{graded}"
            )
    return "\n".join(lines)


def class_report_html(
    summary: list[ExerciseSummary],
    counts: BatchCounts,
    look: list[tuple[str, str, str]],
    title: str = "Class report",
    writing: list[WritingSummary] = (),
    students: dict[str, Parts] | None = None,
) -> str:
    """A self-contained HTML page: the share of students who earned each exercise (a bar chart), the table with the
    commonest failure, the batch's counts, the grades that need a look, the written answers to grade by hand (and how
    many are graded), and, given ``students``, each student's total in its parts (automatic, by hand, late)."""
    chart = _share_chart(summary)
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(r.column)}</td><td>{r.max_points:g}</td><td>{r.earned} / {r.students}</td>"
        f"<td>{r.share:.0%}</td><td>{r.mean_points:.2f}</td>"
        f"<td>{esc(f'{r.top_failure_count} × {r.top_failure}') if r.top_failure else ''}</td></tr>"
        for r in summary
    )
    looks = "".join(f"<li>{esc(s)} · {esc(n)}: {esc(w)}</li>" for s, n, w in look) or "<li>none</li>"
    by_hand = "".join(
        f"<tr><td>{esc(w.column)}</td><td>{w.max_points:g}</td><td>{w.answered} / {w.students}</td>"
        f"<td>{w.graded} / {w.students}</td><td>{f'{w.mean_points:.2f}' if w.graded else ''}</td></tr>"
        for w in writing
    )
    by_hand = (
        "<h2>To grade by hand</h2><p>Points go in <code>hand-grading.csv</code>; <code>hand-grading.md</code> lists "
        "each answer beside its rubric; <code>merge-hand-grades</code> adds them to the grades.</p><table><tr>"
        "<th>written answer</th><th>points</th><th>answered</th><th>graded</th><th>mean points</th></tr>"
        f"{by_hand}</table>"
        if writing
        else ""
    )
    book = "".join(
        f"<tr><td>{esc(name)}</td><td>{p.automatic:g} / {p.automatic_max:g}</td>"
        f"<td>{p.by_hand:g} / {p.by_hand_max:g}{f' ({p.answers - p.graded} to grade)' if p.graded < p.answers else ''}"
        f"</td><td>{f'-{p.penalty:g}' if p.penalty else ''}</td><td>{p.total:g} / {p.possible:g}</td></tr>"
        for name, p in (students or {}).items()
    )
    book = (
        "<h2>Grades</h2><table><tr><th>student</th><th>automatic</th><th>by hand</th><th>late</th><th>total</th></tr>"
        f"{book}</table>"
        if students
        else ""
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title><style>"
        "body{font-family:sans-serif;max-width:60rem;margin:2rem auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}</style></head><body>"
        f"<h1>{esc(title)}</h1><p>Graded {counts.graded}, not submitted {counts.not_submitted}, unreadable "
        f"{counts.unreadable}, timed out in some exercise {counts.timed_out}, grader errors {counts.grader_errors}."
        f"</p><img alt='share of students who earned each exercise' src='data:image/png;base64,{chart}'>"
        "<table><tr><th>exercise</th><th>points</th><th>earned</th><th>share</th><th>mean points</th>"
        f"<th>commonest failure</th></tr>{rows}</table><h2>Needs a look</h2><ul>{looks}</ul>{by_hand}{book}"
        "</body></html>"
    )


def _share_chart(summary: list[ExerciseSummary]) -> str:
    """A horizontal bar chart of each exercise's share of students who earned it, as base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.35 * len(summary) + 1.2))
    ax.barh([r.column for r in summary][::-1], [r.share for r in summary][::-1], color="tab:blue")
    ax.set(xlim=(0, 1), xlabel="share of students who earned every point")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def gradescope_results(notebooks: list[NotebookGrade]) -> dict:
    """One submission in Gradescope's autograder ``results.json`` format: the total score and one test per exercise
    (name, score, max_score, status, output), each visible to the student; the output is the feedback's reason,
    which never holds a hidden test's code."""
    tests = [
        {
            "name": column,
            "score": outcome.points,
            "max_score": outcome.max_points,
            "status": "passed" if outcome.points >= outcome.max_points else "failed",
            "output": outcome.reason,
            "visibility": "visible",
        }
        for grade in notebooks
        for column, outcome in grade.outcomes.items()
    ]
    tests += [
        {
            "name": column,
            "score": written.points,
            "max_score": written.max_points,
            "status": "passed" if written.points >= written.max_points else "failed",
            "output": "written answer, graded by hand",
            "visibility": "visible",
        }
        for grade in notebooks
        for column, written in grade.writing.items()
        if written.points is not None
    ]
    notes = [f"{g.notebook}: {n}" for g in notebooks for n in g.notes]
    by_hand = sum(w.max_points for g in notebooks for w in g.writing.values() if w.points is None)
    if by_hand:
        notes.append(f"Your written answers (up to {by_hand:g} points) are graded by hand, not in this score.")
    notes += [
        f"{g.notebook}: handed in {g.late_days} day{'s' * (g.late_days != 1)} late: {g.penalty:g} points off."
        for g in notebooks
        if g.late_days
    ]
    return {"score": grade_parts(notebooks).total, "output": "\n".join(notes), "tests": tests}
