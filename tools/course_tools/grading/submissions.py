"""Reading what students handed in: their folders, their notebooks, and their answer to each exercise.

Everything is read into memory before the first submission runs, so that nothing a submission does while it runs can
change what another student handed in; an unreadable notebook is a verdict for that student, not an error.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nbformat

from .exercises import TEXT_STUB, Exercise, WrittenAnswer, nbgrader_meta

UNREADABLE = "not a readable notebook"  # how a file that is no notebook is reported (and counted, :mod:`.reporting`)


def submission_files(folder: Path, notebooks: list[str]) -> dict[str, dict[str, Path | None]]:
    """``{student: {notebook: its file or None}}`` for the student folders in ``folder``.

    A student's copy of ``01_masking.ipynb`` is the file of that name anywhere in their folder, else the one
    notebook whose name contains ``01_masking`` (``Copy of 01_masking.ipynb``, ``01_masking (1).ipynb``).
    """
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; expected one folder per student, each holding their notebooks")
    found: dict[str, dict[str, Path | None]] = {}
    for student in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(p for p in student.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        mine: dict[str, Path | None] = {}
        for name in notebooks:
            exact = [p for p in files if p.stem == name]
            loose = [p for p in files if name in p.stem]
            mine[name] = exact[0] if exact else loose[0] if len(loose) == 1 else None
        found[student.name] = mine
    if not found:
        raise ValueError(f"no student folders in {folder}; expected {folder}/<student>/<notebook>.ipynb")
    return found


def find_submissions(folder: Path, notebooks: list[str]) -> dict[str, dict[str, bytes | None]]:
    """``{student: {notebook: bytes or None}}`` for the student folders in ``folder`` (:func:`submission_files`),
    read into memory now, so that nothing a submission does while it runs can change what another student handed in.
    """
    return {
        student: {name: path.read_bytes() if path else None for name, path in mine.items()}
        for student, mine in submission_files(folder, notebooks).items()
    }


SUBMITTED_CSV = "submitted.csv"  # in the submissions folder: when each notebook was handed in (columns below)
FILE_TIME = "file time"  # where a submission time came from when submitted.csv does not give it


def submission_times(
    folder: Path, files: dict[str, dict[str, Path | None]]
) -> dict[tuple[str, str], tuple[datetime, str]]:
    """When each handed-in notebook was submitted: ``{(student, notebook): (time, where from)}``.

    The time is the one ``<folder>/submitted.csv`` records (columns ``student``, ``submitted``: an ISO 8601 time,
    this machine's time zone unless it says ``+01:00`` or ``Z``; and optionally ``notebook``, empty for all of the
    student's notebooks), else the notebook file's modification time (which a copy resets unless it keeps times:
    ``cp -p``, ``rsync -t``, unzip). A row that cannot be read raises ValueError naming it; nothing is guessed.
    """
    recorded: dict[tuple[str, str], datetime] = {}
    table = folder / SUBMITTED_CSV
    if table.is_file():
        with table.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            missing = {"student", "submitted"} - set(reader.fieldnames or [])
            if missing:
                raise ValueError(
                    f"{table}: no column {', '.join(sorted(missing))}; expected student, submitted (an ISO 8601 "
                    "time such as 2025-03-07T23:10) and optionally notebook"
                )
            for row_number, row in enumerate(reader, start=2):
                student, when = (row.get("student") or "").strip(), (row.get("submitted") or "").strip()
                try:
                    time = parse_time(when)
                except ValueError:
                    raise ValueError(
                        f"{table}, row {row_number} ({student or 'no student'}): submitted {when!r} is not a time; "
                        "write an ISO 8601 time such as 2025-03-07T23:10 or 2025-03-07T23:10+01:00"
                    ) from None
                recorded[(student, (row.get("notebook") or "").strip())] = time
    times: dict[tuple[str, str], tuple[datetime, str]] = {}
    for student, mine in files.items():
        for name, path in mine.items():
            if path is None:
                continue
            when = recorded.get((student, name), recorded.get((student, "")))
            if when is not None:
                times[(student, name)] = (when, SUBMITTED_CSV)
            else:
                times[(student, name)] = (datetime.fromtimestamp(path.stat().st_mtime, UTC).astimezone(), FILE_TIME)
    return times


def parse_time(text: str) -> datetime:
    """An ISO 8601 time, in this machine's time zone unless it names one; ValueError if it is none."""
    when = datetime.fromisoformat(text.strip())
    return when.astimezone() if when.tzinfo is None else when


def read_submission(data: bytes) -> Any:
    """A notebook from bytes; ``ValueError`` says why it is unreadable."""
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # noqa: BLE001 - any parse failure is the same verdict for the student
        raise ValueError(f"{UNREADABLE} ({type(err).__name__}: {str(err)[:200]})") from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError(f"{UNREADABLE} (it has no list of cells)")
    return nb


def student_answers(submission: Any, exercises: list[Exercise]) -> dict[str, str | None]:
    """The student's code for each exercise: the cell with the exercise's grade_id, else the one code cell that
    starts with the same line as the released exercise cell (metadata lost in another editor); None if neither."""
    code_cells = [c for c in submission.get("cells", []) if c.get("cell_type") == "code"]
    by_id: dict[str, str] = {}
    for cell in code_cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id and grade_id not in by_id:
            by_id[grade_id] = _text(cell.get("source", ""))
    answers: dict[str, str | None] = {}
    for exercise in exercises:
        if exercise.name in by_id:
            answers[exercise.name] = by_id[exercise.name]
            continue
        first = _first_line(exercise.prompt)
        matches = [
            _text(c.get("source", ""))
            for c in code_cells
            if not nbgrader_meta(c).get("grade_id") and first and _first_line(_text(c.get("source", ""))) == first
        ]
        answers[exercise.name] = matches[0] if len(matches) == 1 else None
    return answers


def student_writing(submission: Any, questions: list[WrittenAnswer]) -> dict[str, str]:
    """The student's text for each written answer, found by grade_id among the Markdown cells: ``""`` when the cell
    is missing or still holds nothing but ``YOUR ANSWER HERE``."""
    by_id: dict[str, str] = {}
    for cell in submission.get("cells", []):
        grade_id = nbgrader_meta(cell).get("grade_id")
        if cell.get("cell_type") == "markdown" and grade_id and grade_id not in by_id:
            by_id[grade_id] = _text(cell.get("source", "")).strip()
    return {q.name: "" if by_id.get(q.name, "") == TEXT_STUB else by_id.get(q.name, "") for q in questions}


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")
