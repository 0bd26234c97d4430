"""One grade book: every grade the autograder gave, the points given by hand, each notebook's submission time and the
late policy, kept in ``grades.json`` beside ``grades.csv``; every file an instructor or a student reads is written
from it (:func:`write_book`).

* ``autograde`` grades into it: what it grades now (every student and notebook, or one ``--student`` or
  ``--notebook``) replaces those grades and keeps the rest (:func:`merge_grades`); a written answer keeps its
  points from hand-grading while its text is unchanged.
* ``merge-hand-grades`` reads the filled ``hand-grading.csv``, refuses it whole if a row names an unknown student or
  question or gives points outside 0..the answer's points (:func:`read_hand_grades`), and rewrites the totals.
* Each time ``grades.csv`` is rewritten its previous version (and the grade book's) is kept in ``history/`` beside
  it, and what changed is listed: student, column, old -> new (:func:`changes`).

From the grade book come ``grades.csv`` (the automatic and the hand-graded parts apart, the late penalty, the total),
``feedback/<student>.md``, ``class-report.html``, ``gradescope/<student>.json``, ``canvas.csv`` (:mod:`.canvas`)
and, when autograde writes them, ``hand-grading.csv`` and ``hand-grading.md``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import sys
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from course_utils.atomic import atomic_write_text

from .canvas import ROSTER, Roster, canvas_csv, read_roster
from .exercises import WrittenAnswer
from .late import LateOptions, LatePolicy, add_late_arguments, apply_late
from .reporting import (
    batch_counts,
    class_report_html,
    class_summary,
    feedback_text,
    grade_parts,
    grade_table,
    gradescope_results,
    hand_grading_csv,
    hand_grading_markdown,
    needs_a_look,
    writing_summary,
)
from .scoring import NotebookGrade, Outcome, Written

FORMAT = 1
HAND_CSV, HAND_MD, CANVAS_CSV, HISTORY = "hand-grading.csv", "hand-grading.md", "canvas.csv", "history"


class HandGradingError(ValueError):
    """hand-grading.csv holds rows the grade book cannot take: nothing was written."""


@dataclass
class GradeBook:
    """Every student's notebook grades (sorted by student, then notebook) and the late policy."""

    grades: dict[str, list[NotebookGrade]] = field(default_factory=dict)
    policy: LatePolicy = field(default_factory=LatePolicy)

    def columns(self) -> list[str]:
        """The exercise columns, notebook by notebook, each notebook's exercises in the lesson's order."""
        found = dict.fromkeys(c for gs in self.grades.values() for g in gs for c in g.outcomes)
        return sorted(found, key=lambda c: c.split(":", 1)[0])

    def written(self) -> dict[tuple[str, str], Written]:
        """``{(student, column): written answer}`` over the whole book."""
        return {(s, c): w for s, gs in self.grades.items() for g in gs for c, w in g.writing.items()}


def book_path(out: Path) -> Path:
    """The grade book beside the grade table: ``grades.csv`` -> ``grades.json``."""
    return out.with_suffix(".json")


# ------------------------------------------------------------------------------------------ reading and writing
def book_json(book: GradeBook) -> str:
    """The grade book as JSON text."""
    return json.dumps(
        {
            "format": FORMAT,
            "late_policy": asdict(book.policy),
            "grades": {s: [asdict(g) for g in gs] for s, gs in book.grades.items()},
        },
        indent=1,
    )


def _known(kind: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(kind)}
    return {k: v for k, v in data.items() if k in names}


def _grade(data: dict[str, Any]) -> NotebookGrade:
    data = _known(NotebookGrade, data)
    data["outcomes"] = {c: Outcome(**_known(Outcome, o)) for c, o in data.get("outcomes", {}).items()}
    data["writing"] = {c: Written(**_known(Written, w)) for c, w in data.get("writing", {}).items()}
    return NotebookGrade(**data)


def load_book(out: Path) -> GradeBook | None:
    """The grade book beside ``out`` (``grades.json``), or None when there is none; ValueError if it is unreadable."""
    path = book_path(out)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        grades = {s: [_grade(g) for g in gs] for s, gs in data["grades"].items()}
        policy = LatePolicy(**_known(LatePolicy, data.get("late_policy", {})))
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(
            f"{path} is not a grade book ({type(err).__name__}: {err}); restore it from history/"
        ) from None
    return GradeBook(grades, policy)


def _same_text(a: str, b: str) -> bool:
    return a.split() == b.split()  # a spreadsheet may change line endings and spaces, never the words


def merge_grades(
    previous: dict[str, list[NotebookGrade]], new: dict[str, list[NotebookGrade]]
) -> tuple[dict[str, list[NotebookGrade]], list[str]]:
    """``previous`` with each (student, notebook) graded in ``new`` replaced -> (the merged grades, notes). A written
    answer keeps the points it was given by hand while its text is unchanged; a changed one loses them (a note
    says so)."""
    merged = {s: {g.notebook: g for g in gs} for s, gs in previous.items()}
    notes = []
    for student, notebooks in new.items():
        mine = merged.setdefault(student, {})
        for grade in notebooks:
            before = mine.get(grade.notebook)
            for column, written in grade.writing.items():
                was = before.writing.get(column) if before else None
                if was is None or was.points is None:
                    continue
                if _same_text(was.text, written.text):
                    written.points = was.points
                else:
                    notes.append(_changed(student, column))
            mine[grade.notebook] = grade
    return {s: [gs[n] for n in sorted(gs)] for s, gs in sorted(merged.items())}, notes


def _changed(student: str, column: str) -> str:
    return f"{student}: {column}: the answer changed since it was graded by hand, so its points were cleared"


def read_filled(path: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """``{(student, answer): (points as typed, text)}`` from a hand-grading.csv about to be rewritten (none: {}), so
    that points typed but not yet merged survive a regrade; ValueError if it lacks the columns to read them."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = {"student", "answer", "points", "text"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"{path} has no column {', '.join(sorted(missing))}, so the points typed in it cannot be kept when "
                "it is rewritten; restore its columns (student, answer, max_points, points, text) or move it away"
            )
        return {
            ((r["student"] or "").strip(), (r["answer"] or "").strip()): ((r["points"] or "").strip(), r["text"] or "")
            for r in reader
        }


def _some(names: set[str] | list[str], most: int = 8) -> str:
    names = sorted(names)
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "") or "none"


def read_hand_grades(path: Path, book: GradeBook) -> dict[tuple[str, str], float | None]:
    """``{(student, answer column): points, or None where the points cell is empty (not graded yet)}`` from a filled
    hand-grading.csv. Every row is checked first; if any names a student or a question the grade book does not
    hold, repeats a (student, answer) pair, or gives points that are not a number from 0 to that answer's points,
    HandGradingError lists each such row (numbered as a spreadsheet numbers it, the header being row 1), its value
    and what is accepted."""
    if not path.is_file():
        raise HandGradingError(
            f"no {path}: autograde writes it beside grades.csv when the lessons ask for written answers"
        )
    written = book.written()
    questions = {c for _, c in written}
    marks: dict[tuple[str, str], float | None] = {}
    seen: dict[tuple[str, str], int] = {}
    problems = []
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = {"student", "answer", "points"} - set(reader.fieldnames or [])
        if missing:
            raise HandGradingError(
                f"{path} has no column {', '.join(sorted(missing))}; it needs student, answer and points "
                "(the file autograde writes has them)"
            )
        for number, row in enumerate(reader, start=2):
            student, column = (row["student"] or "").strip(), (row["answer"] or "").strip()
            typed = (row["points"] or "").strip()
            where = f"row {number} ({student or 'no student'}, {column or 'no answer'})"
            if student not in book.grades:
                problems.append(f"{where}: unknown student {student!r}; the grade book has {_some(set(book.grades))}")
                continue
            if column not in questions:
                problems.append(f"{where}: unknown question {column!r}; the written answers are {_some(questions)}")
                continue
            answer = written.get((student, column))
            if answer is None:
                problems.append(
                    f"{where}: {student}'s {column.split(':', 1)[0]} is not in the grade book, so there is no answer "
                    "to grade"
                )
                continue
            if (student, column) in seen:
                problems.append(f"{where}: {student}'s {column} is graded twice (first in row {seen[student, column]})")
                continue
            seen[student, column] = number
            if not typed:
                marks[student, column] = None
                continue
            try:
                value = float(typed)
            except ValueError:
                value = math.nan
            if not 0 <= value <= answer.max_points:
                what = "is not a number" if math.isnan(value) else f"is outside 0..{answer.max_points:g}"
                problems.append(
                    f"{where}: points {typed!r} {what}; accepted: a number from 0 to {answer.max_points:g} (what "
                    f"{column} is worth), e.g. 0.5, or an empty cell while it is not graded"
                )
                continue
            marks[student, column] = value
    if problems:
        raise HandGradingError(
            f"{path}: {len(problems)} row{'s' * (len(problems) != 1)} refused; nothing was written:\n  "
            + "\n  ".join(problems)
        )
    return marks


# ----------------------------------------------------------------------------------------------- history, changes
def keep_history(out: Path) -> Path | None:
    """Copy ``out`` (and the grade book beside it) into ``history/``, named by when it was written
    (``history/grades-20250307-231000.csv``) -> the copy of ``out``; None when there is no ``out`` yet."""
    if not out.is_file():
        return None
    folder = out.parent / HISTORY
    folder.mkdir(exist_ok=True)
    stamp = datetime.fromtimestamp(out.stat().st_mtime).strftime("%Y%m%d-%H%M%S")
    name, n = f"{out.stem}-{stamp}", 1
    while (folder / f"{name}{out.suffix}").exists():
        n += 1
        name = f"{out.stem}-{stamp}-{n}"
    for path in (out, book_path(out)):
        if path.is_file():
            shutil.copy2(path, folder / f"{name}{path.suffix}")
    return folder / f"{name}{out.suffix}"


def changes(old: str, new: str) -> list[str]:
    """What differs between two grade tables (CSV text): ``student: column old -> new`` for each changed cell
    (``-`` for a cell one of them lacks), ``student: new row`` and ``student: row removed``."""
    before = {r["student"]: r for r in csv.DictReader(old.splitlines())}
    after = {r["student"]: r for r in csv.DictReader(new.splitlines())}
    lines = []
    for student, row in after.items():
        if student not in before:
            lines.append(f"{student}: new row" + (f" (total {row['total']})" if row.get("total") else ""))
            continue
        for column in dict.fromkeys([*before[student], *row]):
            a, b = before[student].get(column) or "", row.get(column) or ""
            if a != b:
                lines.append(f"{student}: {column} {a or '-'} -> {b or '-'}")
    lines += [f"{student}: row removed" for student in before if student not in after]
    return lines


# ------------------------------------------------------------------------------------------------------- writing
def find_roster(out: Path, roster: Path | str | None) -> Roster | None:
    """The roster given, else ``roster.csv`` beside the grade table if there is one (:mod:`.canvas`)."""
    path = Path(roster) if roster is not None else out.parent / ROSTER
    if roster is not None and not path.is_file():
        raise ValueError(f"--roster: no file {path}")
    return read_roster(path) if path.is_file() else None


def book_files(out: Path, *others: Path | str | None) -> list[Path]:
    """The grade book's files beside ``out`` that exist now (and ``others``, such as the roster and the extensions),
    for the grading sandbox to hide: they hold every student's grades, written answers and IDs."""
    beside = [book_path(out), *(out.parent / n for n in (HAND_CSV, HAND_MD, CANVAS_CSV, ROSTER, HISTORY))]
    beside += [out.parent / "class-report.html", out.parent / "gradescope"]
    return [p.resolve() for p in [*beside, *(Path(o) for o in others if o)] if p.exists()]


def write_book(
    book: GradeBook,
    out: Path,
    feedback: Path,
    questions: list[WrittenAnswer] | None = None,
    filled: dict[tuple[str, str], tuple[str, str]] | None = None,
    roster: Roster | None = None,
) -> list[str]:
    """Write every file made from the grade book (the module's list; ``hand-grading.csv`` and ``.md`` only given
    ``questions``, keeping the points ``filled`` in the file they replace while the answer's text is unchanged),
    ``grades.csv`` last, after keeping its previous version in ``history/``. Returns the lines to print: what
    changed, where the history went, warnings."""
    out, feedback = Path(out), Path(feedback)
    messages = [f"warning: {w}" for w in apply_late(book.grades, book.policy)]
    columns = book.columns()
    table = grade_table(book.grades, columns, late=book.policy.active)
    old = out.read_text(encoding="utf-8") if out.is_file() else None
    kept = keep_history(out)
    atomic_write_text(book_path(out), book_json(book))
    for student, notebooks in book.grades.items():
        atomic_write_text(feedback / f"{student}.md", feedback_text(student, notebooks))
        atomic_write_text(
            out.parent / "gradescope" / f"{student}.json", json.dumps(gradescope_results(notebooks), indent=1)
        )
    if questions:
        written, carried = book.written(), {}
        for key, (points, text) in (filled or {}).items():
            if key in written and _same_text(text, written[key].text):
                carried[key] = points
            elif key in written and points:
                messages.append(_changed(*key))
        atomic_write_text(out.parent / HAND_CSV, hand_grading_csv(book.grades, questions, carried))
        atomic_write_text(out.parent / HAND_MD, hand_grading_markdown(book.grades, questions))
    students = {s: grade_parts(gs) for s, gs in book.grades.items()}
    page = class_report_html(
        class_summary(book.grades, columns),
        batch_counts(book.grades),
        needs_a_look(book.grades),
        writing=writing_summary(book.grades),
        students=students,
    )
    atomic_write_text(out.parent / "class-report.html", page)
    text, warnings = canvas_csv(book.grades, roster)
    atomic_write_text(out.parent / CANVAS_CSV, text)
    messages += [f"warning: {CANVAS_CSV}: {w}" for w in warnings]
    if roster is None:
        messages.append(
            f"note: {CANVAS_CSV} has no Canvas IDs (no {ROSTER} beside {out.name}, no --roster): Canvas needs ID or "
            "SIS User ID to match its rows; save Canvas's gradebook export as roster.csv"
        )
    atomic_write_text(out, table)
    if old is None:
        messages.append(f"{out}: a new grade book, {len(book.grades)} students")
    else:
        diff = changes(old, table)
        messages.append(
            f"{out}: previous version kept as {kept}; "
            + (f"{len(diff)} change{'s' * (len(diff) != 1)}:" if diff else "nothing changed")
        )
        messages += [f"  {line}" for line in diff]
    return list(dict.fromkeys(messages))


def merge_hand_grades(
    out: Path | str,
    hand: Path | str | None = None,
    feedback: Path | str | None = None,
    roster: Path | str | None = None,
    late: LateOptions | None = None,
) -> tuple[GradeBook, list[str]]:
    """Read the filled ``hand-grading.csv`` (default: beside ``out``) into the grade book beside ``out`` and rewrite
    every file made from it (:func:`write_book`) -> (the grade book, the lines to print). Nothing is written when a
    row is refused (:func:`read_hand_grades`) or an option cannot be read."""
    out = Path(out)
    book = load_book(out)
    if book is None:
        raise ValueError(
            f"no grade book at {book_path(out)}: run autograde with --out {out} first (it writes {book_path(out).name} "
            f"beside {out.name})"
        )
    hand = Path(hand) if hand is not None else out.parent / HAND_CSV
    marks = read_hand_grades(hand, book)
    book.policy = late.apply_to(book.policy) if late else book.policy
    found = find_roster(out, roster)
    written = book.written()
    for key, points in marks.items():
        written[key].points = points
    messages = write_book(book, out, Path(feedback) if feedback else out.parent / "feedback", roster=found)
    graded = sum(p is not None for p in marks.values())
    still = sum(w.points is None and bool(w.text) for w in written.values())
    return book, [
        f"merged the points of {graded} written answer{'s' * (graded != 1)} from {hand}; {still} still to grade",
        *messages,
    ]


# --------------------------------------------------------------------------------------------------- command line
def add_book_arguments(parser: argparse.ArgumentParser) -> None:
    """``autograde``'s options for grading into the grade book: ``--student``, ``--notebook``, ``--roster`` and the
    late policy's."""
    parser.add_argument(
        "--student",
        action="append",
        metavar="NAME",
        help="grade only this student's folder into the existing grade book, keeping the other rows (repeatable)",
    )
    parser.add_argument(
        "--notebook",
        action="append",
        metavar="STEM",
        help="grade only this notebook (e.g. 01_masking) into the existing grade book (repeatable)",
    )
    parser.add_argument(
        "--roster", default=None, help=f"Canvas's gradebook export, for canvas.csv (default: {ROSTER} beside --out)"
    )
    add_late_arguments(parser)


def add_merge_parser(commands: argparse._SubParsersAction) -> None:
    """The ``merge-hand-grades`` command."""
    merge = commands.add_parser(
        "merge-hand-grades",
        help="add the points of the filled hand-grading.csv to grades.csv, the feedback, the class report and the "
        "exports; refuses the whole file if a row is wrong",
    )
    merge.add_argument("--grades", default="grades.csv", help="the grade table autograde wrote (default: grades.csv)")
    merge.add_argument("--hand", default=None, help=f"the filled points (default: {HAND_CSV} beside --grades)")
    merge.add_argument("--feedback", default=None, help="per-student feedback (default: feedback/ beside --grades)")
    merge.add_argument(
        "--roster", default=None, help=f"Canvas's gradebook export, for canvas.csv (default: {ROSTER} beside --grades)"
    )
    add_late_arguments(merge)


def merge_command(args: argparse.Namespace) -> int:
    """``merge-hand-grades``: 0 when merged, 2 (and the reasons, nothing written) when refused."""
    try:
        _, lines = merge_hand_grades(args.grades, args.hand, args.feedback, args.roster, LateOptions.from_args(args))
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0
