"""The late policy: a due date per notebook, a penalty per day late, a grace period and per-student extensions.

A notebook handed in after its deadline (the due date plus the student's extension) loses, per day or part of a day
late, ``per_day`` percent of the points it is worth (automatic and by hand together), never more than it earned; one
handed in within the grace period after the deadline is on time, and one handed in later is late from the deadline
itself. The time a notebook was handed in comes from :func:`.submissions.submission_times`.

The policy belongs to the grade book (:mod:`.gradebook`), which keeps it: each grading applies it to every grade, and
an option given on the command line replaces only its own part (:class:`LateOptions`).
"""

from __future__ import annotations

import argparse
import csv
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from pathlib import Path

from .scoring import NotebookGrade
from .submissions import parse_time

ALL = "*"  # the key of a due date or an extension that holds for every notebook


@dataclass
class LatePolicy:
    """When each notebook is due and what lateness costs. Times are ISO 8601 strings with their UTC offset."""

    due: dict[str, str] = field(default_factory=dict)  # notebook (or ALL) -> deadline
    per_day: float = 0.0  # percent of the notebook's points taken off per day (or part of one) late
    grace_minutes: float = 0.0
    extensions: dict[str, dict[str, float]] = field(default_factory=dict)  # student -> {notebook or ALL: days}

    @property
    def active(self) -> bool:
        """A due date is set: the grade table shows the late columns."""
        return bool(self.due)

    def deadline(self, student: str, notebook: str) -> datetime | None:
        """The student's deadline for the notebook (the due date plus their extension); None when none is due."""
        due = self.due.get(notebook, self.due.get(ALL))
        if due is None:
            return None
        mine = self.extensions.get(student, {})
        return datetime.fromisoformat(due) + timedelta(days=mine.get(notebook, mine.get(ALL, 0.0)))

    def days_late(self, student: str, notebook: str, submitted: datetime) -> int:
        """Whole days (a part of a day counts as one) after the deadline; 0 when on time or within the grace."""
        deadline = self.deadline(student, notebook)
        if deadline is None or submitted <= deadline + timedelta(minutes=self.grace_minutes):
            return 0
        return math.ceil((submitted - deadline) / timedelta(days=1))

    def describe(self) -> str:
        """One line for the terminal and the guide's words."""
        if not self.active:
            return "no due date"
        due = ", ".join(f"{'every notebook' if k == ALL else k} due {_shown(v)}" for k, v in sorted(self.due.items()))
        extra = f", {len(self.extensions)} students with extensions" if self.extensions else ""
        return f"{due}; {self.per_day:g}% of the points off per day late; grace {self.grace_minutes:g} min{extra}"


def apply_late(grades: dict[str, list[NotebookGrade]], policy: LatePolicy) -> list[str]:
    """Set each grade's ``late_days`` and ``penalty`` under ``policy``; returns warnings (an extension for a student
    the grade book does not hold). The penalty is ``per_day`` % of the notebook's points possible (automatic and by
    hand) per day late, never more than the points it earned."""
    for student, notebooks in grades.items():
        for grade in notebooks:
            grade.late_days, grade.penalty = 0, 0.0
            if not grade.submitted:
                continue
            grade.late_days = policy.days_late(student, grade.notebook, parse_time(grade.submitted))
            if grade.late_days:
                possible = grade.points[1] + sum(w.max_points for w in grade.writing.values())
                earned = grade.points[0] + sum(w.points or 0.0 for w in grade.writing.values())
                grade.penalty = round(min(earned, grade.late_days * policy.per_day / 100 * possible), 6)
    return [
        f"the extension for {student!r} matches no student in the grade book"
        for student in policy.extensions
        if student not in grades
    ]


def _shown(iso: str) -> str:
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M %z")


# ------------------------------------------------------------------------------------------------ reading options
def parse_due(value: str) -> tuple[str, str]:
    """``WHEN`` or ``NOTEBOOK=WHEN`` -> (notebook or ALL, ISO time with its offset). A date alone means the end of
    that day (23:59:59); a time without a zone is this machine's."""
    notebook, _, when = value.partition("=") if "=" in value else (ALL, "", value)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", when.strip()):
            parsed = datetime.combine(datetime.fromisoformat(when.strip()).date(), time(23, 59, 59)).astimezone()
        else:
            parsed = parse_time(when)
    except ValueError:
        raise ValueError(
            f"--due {value!r}: {when!r} is not a time; write 2025-03-07T23:59 (this machine's time zone), "
            "2025-03-07T23:59+01:00, or a date alone for the end of that day, optionally after NOTEBOOK="
        ) from None
    return notebook.strip() or ALL, parsed.isoformat()


def parse_minutes(value: str) -> float:
    """A duration: ``30`` or ``30m`` (minutes), ``2h``, ``1d`` -> minutes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhd]?)\s*", value)
    if not match:
        raise ValueError(f"--grace {value!r} is not a duration; write minutes (30 or 30m), hours (2h) or days (1d)")
    return float(match[1]) * {"": 1, "m": 1, "h": 60, "d": 1440}[match[2]]


def parse_percent(value: str) -> float:
    """A percentage ``10`` or ``10%``, from 0 to 100."""
    try:
        percent = float(value.strip().removesuffix("%"))
    except ValueError:
        percent = math.nan
    if not 0 <= percent <= 100:
        raise ValueError(f"--late-penalty {value!r}: give a percentage from 0 to 100, e.g. 10 (10% per day)")
    return percent


def read_extensions(path: Path) -> dict[str, dict[str, float]]:
    """``{student: {notebook or ALL: days}}`` from a CSV with columns ``student``, ``days`` (a number of days,
    fractions allowed) and optionally ``notebook`` (empty: every notebook). A row that cannot be read raises
    ValueError naming it (rows numbered as a spreadsheet does, the header being row 1)."""
    if not path.is_file():
        raise ValueError(f"--extensions: no file {path}")
    found: dict[str, dict[str, float]] = {}
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        missing = {"student", "days"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"{path}: no column {', '.join(sorted(missing))}; expected student, days and optionally notebook"
            )
        for row_number, row in enumerate(reader, start=2):
            student, days = (row.get("student") or "").strip(), (row.get("days") or "").strip()
            try:
                value = float(days)
            except ValueError:
                value = math.nan
            if not student or not 0 <= value < 3650:
                raise ValueError(
                    f"{path}, row {row_number}: student {student!r}, days {days!r}: give the student's folder name "
                    "and a number of days from 0 (e.g. 2 or 0.5)"
                )
            found.setdefault(student, {})[(row.get("notebook") or "").strip() or ALL] = value
    return found


@dataclass
class LateOptions:
    """The late policy's options of one command; each one given replaces that part of the grade book's policy."""

    due: list[str] = field(default_factory=list)
    late_penalty: str | None = None
    grace: str | None = None
    extensions: str | None = None
    no_due_date: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> LateOptions:
        return cls(args.due or [], args.late_penalty, args.grace, args.extensions, args.no_due_date)

    def apply_to(self, policy: LatePolicy) -> LatePolicy:
        """The grade book's ``policy`` with these options' parts replaced; ValueError for an option it cannot
        read (before anything is graded or written)."""
        new = (
            LatePolicy()
            if self.no_due_date
            else LatePolicy(dict(policy.due), policy.per_day, policy.grace_minutes, dict(policy.extensions))
        )
        new.due.update(parse_due(v) for v in self.due)
        if self.late_penalty is not None:
            new.per_day = parse_percent(self.late_penalty)
        if self.grace is not None:
            new.grace_minutes = parse_minutes(self.grace)
        if self.extensions is not None:
            new.extensions = read_extensions(Path(self.extensions))
        return new


def add_late_arguments(parser: argparse.ArgumentParser) -> None:
    """The late policy's options (``autograde`` and ``merge-hand-grades`` share them)."""
    group = parser.add_argument_group(
        "late policy (kept in the grade book: each option given replaces its part; see the instructors' guide)"
    )
    group.add_argument(
        "--due",
        action="append",
        metavar="[NOTEBOOK=]WHEN",
        help="the deadline, e.g. 2025-03-07T23:59 (this machine's zone; a date alone: the end of that day); "
        "NOTEBOOK= for one notebook; repeat for several",
    )
    group.add_argument(
        "--late-penalty", metavar="PERCENT", help="percent of a notebook's points taken off per day late (e.g. 10)"
    )
    group.add_argument("--grace", metavar="DURATION", help="late by at most this is on time: 30m, 2h, 1d")
    group.add_argument("--extensions", metavar="CSV", help="per-student extensions: columns student, days[, notebook]")
    group.add_argument("--no-due-date", action="store_true", help="forget the grade book's late policy")
