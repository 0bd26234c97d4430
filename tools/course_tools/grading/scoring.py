"""Scoring: run one student's notebook in a sandboxed kernel and give each exercise its points and the reason, and
calibrate first, by grading the instructor's own solutions the same way before anyone else is graded.

What runs is always the instructor's notebook: every cell comes from the solution notebook except the bodies of
the exercise cells, which come from the student's notebook (:func:`.submissions.student_answers`), each wrapped in
:mod:`.guard` cells (:func:`.runner.plan`). An exercise whose cell loops forever, exhausts memory or ends the
process gets zero and the notebook is run again without it, so the other exercises still earn their marks. A
lesson cell that fails in a student's run marks that grade as needing the instructor's look.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat

from . import guard as guard_module
from .exercises import Exercise, without_magics
from .rules import broken
from .runner import Limits, Run, Step, execute, plan
from .sandbox import Policy
from .submissions import read_submission, student_answers

NOT_ANSWERED = "NotImplementedError"
# Words the reasons below are built from; the class report (:mod:`.reporting`) counts outcomes by them
NOT_SUBMITTED, TIME_LIMIT, MEMORY_LIMIT, GRADER_ERROR = "not submitted", "time limit", "memory limit", "grader error"


@dataclass
class Outcome:
    """One exercise of one submission."""

    points: float
    max_points: float
    reason: str


@dataclass
class Written:
    """One written answer of one submission, graded by hand (:class:`.exercises.WrittenAnswer`)."""

    max_points: float
    text: str  # "" when missing or left as the release's stub
    points: float | None = None  # the instructor's, once merged from hand-grading.csv (.gradebook); None: not yet


@dataclass
class NotebookGrade:
    """One student's grade for one notebook: each exercise's outcome, notes for the feedback, failed lesson cells."""

    notebook: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by exercise column
    notes: list[str] = field(default_factory=list)
    lesson_errors: list[str] = field(default_factory=list)  # the instructor's own cells that failed
    writing: dict[str, Written] = field(default_factory=dict)  # written answers by column, graded by hand later
    submitted: str = ""  # when it was handed in (ISO 8601; "" when not handed in), and how that is known:
    submitted_from: str = ""  # "submitted.csv" or "file time" (.submissions.submission_times)
    late_days: int = 0  # days after the deadline, and the points the late policy takes off (.late.apply_late)
    penalty: float = 0.0
    slowest_cell: float = 0.0  # seconds of its slowest exercise cell or check (calibration sets limits from it)

    @property
    def needs_look(self) -> bool:
        """A cell of the lesson failed: a grading problem, not the student's, so the grade needs the instructor."""
        return bool(self.lesson_errors)

    @property
    def points(self) -> tuple[float, float]:
        return (sum(o.points for o in self.outcomes.values()), sum(o.max_points for o in self.outcomes.values()))


class CalibrationError(ValueError):
    """The instructor's own solution did not earn every point under the grading sandbox: nothing is graded."""


def _why(ended: str, limits: Limits) -> str:
    return {
        "time": f"did not finish within its {TIME_LIMIT} ({limits.cell_seconds:g} s per exercise cell, "
        f"{limits.notebook_seconds:g} s per notebook) — an endless loop?",
        "memory": f"used more than the {MEMORY_LIMIT} ({limits.memory_mb} MB)",
        "died": "ended the Python process (os._exit, exit() or a crash)",
    }.get(ended, f"stopped the run ({ended})")


def _reply(run: Run, index: int | None) -> dict[str, Any] | None:
    return None if index is None else run.replies.get(index)


def _error(reply: dict[str, Any]) -> str:
    ename, evalue = reply.get("ename", "Error"), str(reply.get("evalue", "")).strip()
    text = evalue if ename == "AssertionError" and evalue else f"{ename}: {evalue}" if evalue else ename
    return text[:300]


def _guard_report(run: Run, index: int | None) -> dict[str, Any] | None:
    for line in run.outputs.get(index, "").splitlines() if index is not None else []:
        if line.startswith(guard_module.MARKER):
            return json.loads(line[len(guard_module.MARKER) :])
    return None


def score(steps: list[Step], run: Run, exercise: Exercise) -> tuple[bool, str, list[str]]:
    """``(passed, reason, notes)`` for one exercise from a finished run."""
    indices = [i for i, s in enumerate(steps) if s.exercise == exercise.name]
    roles = {steps[i].role: i for i in indices if steps[i].role != "guard"}
    guards = [i for i in indices if steps[i].role == "guard"]
    notes = []
    restored = _guard_report(run, guards[1]) if len(guards) > 1 else None
    if restored and restored.get("restored"):
        notes.append(
            f"{exercise.column}: your cell changed {', '.join(restored['restored'][:5])}, which the lesson "
            "uses elsewhere; the grader put the original back"
        )
    solution, visible, hidden = (_reply(run, roles.get(r)) for r in ("solution", "visible", "hidden"))
    if visible is None:
        return False, "not graded: the run stopped before its check", notes
    if solution is not None and solution.get("status") == "error":
        if solution.get("ename") == NOT_ANSWERED:
            return False, "not answered (the cell still raises NotImplementedError)", notes
        return False, f"your cell raised {_error(solution)}; an exercise cell must run without an error", notes
    if "solution" in roles:
        rules_broken = broken(without_magics(steps[roles["solution"]].code), exercise.rules)
        if rules_broken:
            return False, f"the task's rule: {rules_broken[0]}", notes
    in_place = (restored or {}).get("changed_in_place")
    if in_place:
        return (
            False,
            f"your cell changed {', '.join(in_place[:5])} in place, data the lesson reads after this exercise (the "
            "grader put the original back): compute into new objects and leave the lesson's own as they were",
            notes,
        )
    if visible.get("status") == "error":
        if visible.get("ename") == NOT_ANSWERED:
            return False, "not answered (the exercise still raises NotImplementedError)", notes
        return False, f"the check says: {_error(visible)}", notes
    if "hidden" in roles:
        if hidden is None:
            return False, "not graded: the run stopped during the hidden tests", notes
        if hidden.get("status") == "error":
            return False, hidden_reason(hidden), notes
    tampered = _guard_report(run, guards[-1]) if guards else None
    if tampered is None:
        return False, "not graded: the run stopped before the grader's last check", notes
    if tampered.get("tampered"):
        return (
            False,
            (
                f"while the tests ran, your code changed {', '.join(tampered['tampered'][:5])}, which the tests "
                "rely on; an exercise may only define its own names"
            ),
            notes,
        )
    return True, "passed", notes


def hidden_reason(reply: dict[str, Any]) -> str:
    """Why a hidden test failed, for the student: the property its assertion states (the message written with the
    test, e.g. "embedding_parameters should hold for any config, not only BERT-base"), never its code or the values
    it compared. An assertion without a message, or another error, is named by its type only."""
    ename, message = reply.get("ename", "Error"), str(reply.get("evalue", "")).strip()
    if ename == "AssertionError" and message:
        return f"passes the visible check but not the hidden tests: {message}"
    return f"passes the visible check but not the hidden tests ({ename})"


def zero_grade(name: str, exercises: list[Exercise], reason: str) -> NotebookGrade:
    """No marks for any exercise of notebook ``name``, for one ``reason``."""
    return NotebookGrade(name, {e.column: Outcome(0.0, e.points, reason) for e in exercises})


def grade_notebook(
    name: str,
    source: Any,
    exercises: list[Exercise],
    data: bytes | None,
    limits: Limits,
    policy: Policy,
    env: dict[str, str],
) -> NotebookGrade:
    """Grade one student's copy (``data``: the file's bytes, None if not submitted) of notebook ``name``."""
    grade = NotebookGrade(name)
    if data is None:
        return zero_grade(name, exercises, NOT_SUBMITTED)
    try:
        submission = read_submission(data)
    except ValueError as err:
        return zero_grade(name, exercises, str(err))
    answers = student_answers(submission, exercises)
    verdicts: dict[str, str] = {
        e.name: "the cell of this exercise is missing from the submitted notebook "
        "(deleted, or its metadata and first line changed)"
        for e in exercises
        if answers[e.name] is None
    }
    token = secrets.token_hex(6)
    for _attempt in range(len(exercises) + 1):
        steps = plan(source, exercises, answers, set(verdicts), token)
        scratch = Path(tempfile.mkdtemp(prefix="course-grading-"))
        try:
            for sub in ("work", "tmp", "ipython"):
                (scratch / sub).mkdir()
            run_env = {
                **env,
                "TMPDIR": str(scratch / "tmp"),
                "IPYTHONDIR": str(scratch / "ipython"),
                "COURSE_RESULTS_FILE": str(scratch / "results.json"),
            }
            run_policy = replace(policy, writable=[str(scratch), *policy.writable])
            run = execute(steps, limits, scratch, run_policy, run_env)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        grade.slowest_cell = max(
            [t for i, t in run.seconds.items() if steps[i].role in ("solution", "visible", "hidden")], default=0.0
        )
        if run.ended is None:
            break
        if run.at is None:  # no cell ever started: the grading kernel itself did not come up
            grade.notes.append(f"the grading kernel did not start ({run.ended}); tell your instructor")
            for e in exercises:
                verdicts.setdefault(e.name, "not graded: the grading kernel did not start")
            break
        at = run.at
        culprit, lesson_cell = steps[at].exercise, None
        if culprit is None:  # a lesson cell broke: blame the last student cell that ran before it, if any
            lesson_cell = steps[at].source_index
            culprit = next((s.exercise for s in reversed(steps[:at]) if s.role == "solution"), None)
        if culprit is None:
            grade.notes.append(
                f"the lesson's cell {lesson_cell} {_why(run.ended, limits)} before any exercise ran; "
                "nothing could be graded (tell your instructor)"
            )
            grade.lesson_errors.append(f"cell {lesson_cell} {_why(run.ended, limits)}")
            for e in exercises:
                verdicts.setdefault(e.name, f"not graded: the lesson itself {_why(run.ended, limits)}")
            break
        after = "" if lesson_cell is None else f" (it broke the lesson's cell {lesson_cell}, which runs after it)"
        verdicts[culprit] = f"your code {_why(run.ended, limits)}{after}; the notebook was graded again without it"
    else:
        run = None
    for e in exercises:
        if e.name in verdicts:
            grade.outcomes[e.column] = Outcome(0.0, e.points, verdicts[e.name])
            continue
        if run is None or run.ended is not None:
            grade.outcomes[e.column] = Outcome(0.0, e.points, "not graded: the run did not finish")
            continue
        passed, reason, notes = score(steps, run, e)
        grade.outcomes[e.column] = Outcome(e.points if passed else 0.0, e.points, reason)
        grade.notes += notes
    if run is not None and run.ended is None:
        for i, s in enumerate(steps):
            reply = run.replies.get(i, {})
            if s.role == "lesson" and reply.get("status") == "error":
                grade.notes.append(f"the lesson's cell {s.source_index} raised {_error(reply)}")
                grade.lesson_errors.append(f"cell {s.source_index} raised {_error(reply)}")
    return grade


def _likely_cause(text: str) -> str:
    if "PermissionError" in text or "Permission denied" in text:
        return (
            "a path the sandbox denied: the lesson needs a file inside a folder it hides (the checkout, the "
            "submissions, the feedback) or a cache outside ~/.cache"
        )
    if TIME_LIMIT in text:
        return "a time limit too tight for this machine: raise --time-limit or --cell-time-limit"
    if MEMORY_LIMIT in text:
        return "a memory limit too tight: raise --memory-mb"
    if "could not be loaded" in text or "not found" in text:
        return "the environment: data or a model the lesson loads is not reachable from here"
    return "the environment the kernels run in (see the error)"


def calibrate(
    names: list[str],
    sources: dict[str, Any],
    exercises: dict[str, list[Exercise]],
    limits: Limits,
    policy: Policy,
    env: dict[str, str],
) -> dict[str, tuple[float, float]]:
    """Grade each solution notebook as if a student had handed it in, under the same sandbox and environment ->
    (seconds per notebook, seconds of its slowest exercise cell or check), each run under
    :meth:`.runner.Limits.for_calibration` (generous unless the flags set them). Raises ``CalibrationError``
    (which lesson, which cell, the error and its likely cause) unless every one earns every point with no failing
    cell: then the grader, not the students, is wrong, and nothing may be graded."""
    seconds, problems = {}, []
    for name in names:
        start = time.perf_counter()
        grade = grade_notebook(
            name,
            sources[name],
            exercises[name],
            nbformat.writes(sources[name]).encode(),
            limits.for_calibration(name),
            policy,
            env,
        )
        seconds[name] = (time.perf_counter() - start, grade.slowest_cell)
        earned, possible = grade.points
        if earned == possible and not grade.needs_look:
            continue
        lost = [
            f"{column.split(':', 1)[1]}: {o.reason}" for column, o in grade.outcomes.items() if o.points < o.max_points
        ]
        detail = "; ".join(grade.lesson_errors + lost)
        problems.append(
            f"{name}: the solution earns {earned:g} / {possible:g} ({detail[:1200]}). Likely cause: "
            f"{_likely_cause(detail)}."
        )
    if problems:
        raise CalibrationError(
            "calibration failed: the instructor's own solution does not earn every point in the grading sandbox, so "
            "no student was graded.\n  "
            + "\n  ".join(problems)
            + "\nFix the environment (or the limits) and run again; --skip-calibration grades anyway."
        )
    return seconds
