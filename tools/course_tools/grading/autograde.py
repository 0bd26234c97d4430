"""Grade a folder of submissions against the instructor's solution notebooks, without trusting student code.

:func:`autograde` is the whole batch: it reads the solution notebooks and every submission (:mod:`.submissions`),
says which isolation this machine gives the kernels (:mod:`.isolation`), calibrates on the instructor's own
solutions and then grades each submission in a fresh sandboxed kernel of its own (:mod:`.scoring`, :mod:`.runner`,
:mod:`.sandbox`, with the policy and environment of :mod:`.environment`), and writes the grade table and the
feedback (:mod:`.reporting`) only at the end.

What runs is always the instructor's notebook: every cell comes from the solution notebook except the bodies of
the exercise cells, which come from the student's notebook (found by ``grade_id``, else by the exercise's first
line, so deleted, reordered or edited cells change nothing else). The visible checks and the hidden tests are the
instructor's, re-inserted from the source. Each submission runs with a time limit per exercise cell and per
notebook, a memory limit, and on Linux a filesystem sandbox (bubblewrap where it works, else Landlock) that hides
the instructor's notebooks, the other submissions and the grade table. Before anyone is graded, the instructor's
own solutions are graded the same way (:func:`.scoring.calibrate`): a grader that would fail a correct answer
refuses to grade at all. A lesson cell that fails in a student's run marks that grade as needing the instructor's
look (the table's ``needs_look`` column, a line atop the feedback).
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import replace
from pathlib import Path

import nbformat
from tqdm.auto import tqdm

from .environment import kernel_environment, sandbox_policy
from .exercises import WrittenAnswer, find_exercises, find_written_answers
from .gradebook import (
    HAND_CSV,
    GradeBook,
    book_files,
    book_path,
    find_roster,
    load_book,
    merge_grades,
    read_filled,
    write_book,
)
from .isolation import detect_isolation
from .late import LateOptions
from .release import notebooks_in
from .runner import MARGIN, Limits
from .scoring import GRADER_ERROR, CalibrationError, NotebookGrade, Written, calibrate, grade_notebook, zero_grade
from .submissions import find_submissions, read_submission, student_writing, submission_files, submission_times


def _writing(data: bytes | None, questions: list[WrittenAnswer]) -> list[tuple[WrittenAnswer, str]]:
    """(question, the student's text) for each written answer of a notebook; ``""`` where none can be read."""
    try:
        texts = student_writing(read_submission(data), questions) if data is not None else {}
    except ValueError:  # unreadable: the exercises already say so
        texts = {}
    return [(q, texts.get(q.name, "")) for q in questions]


def _subreaper() -> None:
    """Linux: orphans of grading kernels (double-forked daemons) become this process's children, so they are killed."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def autograde(
    submissions: Path | str,
    source: Path | str,
    out: Path | str,
    limits: Limits | None = None,
    feedback: Path | str | None = None,
    progress: bool | None = None,
    calibration: bool = True,
    isolation: str | None = None,
    students: list[str] | None = None,
    notebooks: list[str] | None = None,
    late: LateOptions | None = None,
    roster: Path | str | None = None,
) -> dict[str, list[NotebookGrade]]:
    """Grade every student folder in ``submissions`` against the solution notebooks in ``source``; write the grade
    table ``out`` (CSV), one Markdown feedback file per student (default: a ``feedback/`` folder beside ``out``), and
    beside ``out`` the class report ``class-report.html``, each submission in Gradescope's format
    (``gradescope/<student>.json``) and, where the lessons ask for written answers, what is left to grade by hand:
    ``hand-grading.csv`` (a row per student and answer, its points to fill in) and ``hand-grading.md`` (per question:
    the question, the rubric, every student's answer).

    Only the notebooks that at least one student handed in are graded. First (unless ``calibration`` is False) each
    of their solution notebooks is graded under the same sandbox and limits (:func:`.scoring.calibrate`); if one
    does not earn every point nothing is graded. Its time sets the per-notebook time limit when none was given
    (3 x + 60 s). The isolation the kernels get is printed first (:func:`.isolation.detect_isolation`; ``isolation``
    is ``auto``, ``bubblewrap`` or ``landlock``, by default ``$COURSE_GRADING_ISOLATION`` or ``auto``), with a
    warning on stderr where there is no filesystem sandbox; one asked for that this machine lacks raises ValueError
    before anything runs.
    Everything is read before the first submission runs and written after the last one, each file whole; a
    submission that crashes its kernel, hangs or breaks the grader for any reason costs only its own marks.

    The grades go into the grade book beside ``out`` (``grades.json``, :mod:`.gradebook`): what is graded now
    replaces those students' grades for those notebooks and the rest is kept; ``students`` or ``notebooks`` grade
    only those. Each notebook's submission time (:func:`.submissions.submission_times`) is recorded and the grade
    book's late policy, changed by ``late``, applied (:mod:`.late`); ``canvas.csv`` is written with the ``roster``
    (default: ``roster.csv`` beside ``out``). What changed in ``out`` and where its previous version went are
    printed. Returns the whole grade book's grades.
    """
    submissions, source, out = Path(submissions), Path(source), Path(out)
    feedback = Path(feedback) if feedback is not None else out.parent / "feedback"
    paths = {p.stem: p for p in notebooks_in(source)}
    sources = {name: nbformat.read(p, as_version=4) for name, p in paths.items()}
    exercises = {name: find_exercises(nb, name) for name, nb in sources.items()}
    questions = {name: find_written_answers(nb, name, paths[name].parent) for name, nb in sources.items()}
    handed_in = find_submissions(submissions, list(sources))
    for name in notebooks or []:
        if not exercises.get(name):
            raise ValueError(
                f"--notebook {name}: no notebook with exercises of that name in {source} (there: "
                f"{', '.join(n for n in sources if exercises[n]) or 'none'})"
            )
    for student in students or []:
        if student not in handed_in:
            raise ValueError(f"--student {student}: no folder {submissions / student} (there: {', '.join(handed_in)})")
    handed_in = {s: mine for s, mine in handed_in.items() if not students or s in students}
    graded = [
        n
        for n in sources
        if exercises[n] and any(s[n] is not None for s in handed_in.values()) and (not notebooks or n in notebooks)
    ]
    if not graded:
        raise ValueError(
            f"no submission in {submissions} holds one of the notebooks with exercises in {source}: "
            f"{', '.join(n for n in sources if exercises[n] and (not notebooks or n in notebooks))}"
            + (f" (among those of {', '.join(students)})" if students else "")
        )
    previous = load_book(out)
    if previous is None and (students or notebooks) and out.exists():
        raise ValueError(
            f"{out} has no grade book beside it ({book_path(out).name}; an older version wrote it): grade the whole "
            "class once without --student or --notebook"
        )
    late_policy = (late or LateOptions()).apply_to(previous.policy if previous else GradeBook().policy)
    found_roster = find_roster(out, roster)
    filled = read_filled(out.parent / HAND_CSV)
    times = submission_times(submissions, submission_files(submissions, list(sources)))
    limits = limits or Limits()
    sandbox = detect_isolation(isolation)
    made_feedback = not feedback.exists()
    feedback.mkdir(parents=True, exist_ok=True)
    policy = sandbox_policy(source if source.is_dir() else source.parent, submissions, out, feedback)
    hidden = book_files(out, roster, late.extensions if late else None)  # every student's grades, answers and IDs
    policy = sandbox.apply(replace(policy, deny=[*policy.deny, *map(str, hidden)]))
    env = kernel_environment()
    _subreaper()
    print(sandbox.describe())
    if sandbox.warning:
        print(sandbox.warning, file=sys.stderr)
    per_notebook = {name: limits.for_notebook(name) for name in graded}
    if calibration:
        try:
            seconds = calibrate(graded, sources, exercises, limits, policy, env)
        except CalibrationError:
            if made_feedback and not any(feedback.iterdir()):
                feedback.rmdir()  # nothing graded, nothing left behind
            raise
        for name, (took, slowest) in seconds.items():
            per_notebook[name] = limits.calibrated(name, took, slowest)
            print(
                f"calibration: {name}: the solution earns every point in {took:.0f} s (slowest exercise cell "
                f"{slowest:.1f} s); limits per submission: {per_notebook[name].notebook_seconds:.0f} s, "
                f"{per_notebook[name].cell_seconds:.0f} s per exercise cell"
                + (" (set by flags)" if limits.notebook_seconds and limits.cell_seconds else f" ({MARGIN}x + a margin)")
            )
    results: dict[str, list[NotebookGrade]] = {student: [] for student in handed_in}
    jobs = [(student, name) for student in handed_in for name in graded]
    for student, name in tqdm(
        jobs, desc="grading", unit="notebook", disable=None if progress is None else not progress
    ):
        try:
            grade = grade_notebook(
                name, sources[name], exercises[name], handed_in[student][name], per_notebook[name], policy, env
            )
        except Exception as err:  # noqa: BLE001 - the batch goes on; this student's notebook gets zero and the reason
            grade = zero_grade(name, exercises[name], f"{GRADER_ERROR}: {type(err).__name__}: {err}")
        texts = _writing(handed_in[student][name], questions[name])
        grade.writing = {q.column: Written(q.points, text) for q, text in texts}
        if (student, name) in times:
            when, origin = times[student, name]
            grade.submitted, grade.submitted_from = when.isoformat(timespec="seconds"), origin
        results[student].append(grade)
    merged, notes = merge_grades(previous.grades if previous else {}, results)
    book = GradeBook(merged, late_policy)
    in_book = sorted({g.notebook for gs in merged.values() for g in gs})
    by_hand = [q for name in in_book for q in questions.get(name, [])]
    if late_policy.active:
        print(f"late policy: {late_policy.describe()}")
    for line in dict.fromkeys(notes + write_book(book, out, feedback, by_hand, filled, found_roster)):
        print(line)
    return merged
