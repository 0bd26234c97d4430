"""Canvas's grade import CSV (Grades → Import): ``Student``, ``ID``, ``SIS User ID``, ``Section``, then one column per
assignment (here: per notebook) holding the points.

Canvas matches a row to a student by its ``ID`` or ``SIS User ID``, which the course's own grade book does not know:
they come from a roster, best Canvas's own gradebook export (Grades → Export), which has exactly these columns. A
student's submission folder is matched to the roster's row by the roster's optional ``folder`` column, else by its
``SIS Login ID``, ``SIS User ID`` or ``ID``, else by name (``ada_lovelace`` is ``Lovelace, Ada`` or ``Ada Lovelace``).
A notebook's column takes the roster's heading for it when the roster has one that starts with the notebook's name
(``01_masking (12345)``: Canvas then updates that assignment), else the notebook's name (Canvas makes a new
assignment of that name on import).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .scoring import NotebookGrade

IDENTITY = ("Student", "ID", "SIS User ID", "Section")
ROSTER = "roster.csv"  # looked for beside the grade table when no roster is given


@dataclass
class Roster:
    """The roster's rows (each a dict of its columns) and its headings."""

    rows: list[dict[str, str]] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)


def read_roster(path: Path) -> Roster:
    """A roster CSV with at least the ``Student`` column; Canvas's ``Points Possible`` row is skipped."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        headings = [h.strip() for h in reader.fieldnames or []]
        if "Student" not in headings:
            raise ValueError(
                f"{path}: no Student column; give Canvas's gradebook export (Grades → Export), or a CSV with the "
                "columns Student, ID, SIS User ID, Section and optionally folder"
            )
        rows = [{(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)} for row in reader]
    return Roster([r for r in rows if r.get("Student") and r["Student"] != "Points Possible"], headings)


def _tokens(name: str) -> tuple[str, ...]:
    return tuple(sorted(re.findall(r"[^\W_]+", name.casefold())))


def match_roster(students: list[str], roster: Roster) -> tuple[dict[str, dict[str, str]], list[str]]:
    """``({student folder: roster row}, warnings)``: each folder's row (see the module's words), and a warning for a
    folder with no row or more than one."""
    found, warnings = {}, []
    for student in students:
        rows = [r for r in roster.rows if r.get("folder") == student]
        for key in ("SIS Login ID", "SIS User ID", "ID"):
            rows = rows or [r for r in roster.rows if r.get(key) and r[key].casefold() == student.casefold()]
        rows = rows or [r for r in roster.rows if _tokens(r["Student"]) == _tokens(student)]
        if len(rows) == 1:
            found[student] = rows[0]
        else:
            which = "no row of the roster matches" if not rows else f"{len(rows)} rows of the roster match"
            warnings.append(
                f"{student}: {which} this folder; give the roster a folder column naming each student's submission "
                "folder"
            )
    return found, warnings


def notebook_points(notebooks: list[NotebookGrade]) -> dict[str, float]:
    """Each notebook's points for the LMS: automatic + graded by hand - the late penalty."""
    return {g.notebook: g.points[0] + sum(w.points or 0.0 for w in g.writing.values()) - g.penalty for g in notebooks}


def canvas_csv(grades: dict[str, list[NotebookGrade]], roster: Roster | None) -> tuple[str, list[str]]:
    """(Canvas's import CSV, warnings): one row per student of the grade book, one column per notebook. Without a
    roster the ID columns are empty and the Student column holds the folder name, which Canvas cannot match."""
    notebooks = sorted({g.notebook for gs in grades.values() for g in gs})
    headings = {
        name: next((h for h in (roster.headings if roster else []) if h.startswith(f"{name} (")), name)
        for name in notebooks
    }
    matched, warnings = match_roster(list(grades), roster) if roster else ({}, [])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*IDENTITY, *(headings[n] for n in notebooks)])
    for student, gs in grades.items():
        row = matched.get(student, {"Student": student})
        points = notebook_points(gs)
        writer.writerow(
            [*(row.get(k, "") for k in IDENTITY), *("" if n not in points else f"{points[n]:g}" for n in notebooks)]
        )
    return buffer.getvalue(), warnings
