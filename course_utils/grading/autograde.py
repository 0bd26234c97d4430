"""Grade a folder of submissions against the instructor's solution notebooks, without trusting student code.

What runs is always the instructor's notebook: every cell comes from the solution notebook except the bodies of
the exercise cells, which come from the student's notebook (found by ``grade_id``, else by the exercise's first
line, so deleted, reordered or edited cells change nothing else). The visible checks and the hidden tests are the
instructor's, re-inserted from the source. Each submission runs in a fresh kernel of its own, started through
:mod:`.sandbox` (memory and file-size limits; on Linux a filesystem sandbox that hides the instructor's notebooks,
the other submissions and the grade table), with a time limit per exercise cell and per notebook. An exercise whose
cell loops forever, exhausts memory or ends the process gets zero and the notebook is run again without it, so the
other exercises still earn their marks. Grades are computed in this process and written only at the end.

Before anyone is graded, the instructor's own solutions are graded the same way (:func:`calibrate`): a grader that
would fail a correct answer refuses to grade at all. A lesson cell that fails in a student's run marks that grade as
needing the instructor's look (the table's ``needs_look`` column, a line atop the feedback).
"""
from __future__ import annotations

import csv
import io
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat

from ..atomic import atomic_write_text
from . import guard as guard_module
from .exercises import Exercise, find_exercises, nbgrader_meta
from .release import notebooks_in
from .runner import Limits, Run, Step, execute, plan
from .sandbox import Policy, landlock_abi

NOT_ANSWERED = "NotImplementedError"


@dataclass
class Outcome:
    """One exercise of one submission."""

    points: float
    max_points: float
    reason: str


@dataclass
class NotebookGrade:
    notebook: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # by exercise column
    notes: list[str] = field(default_factory=list)
    lesson_errors: list[str] = field(default_factory=list)       # the instructor's own cells that failed

    @property
    def needs_look(self) -> bool:
        """A cell of the lesson failed: a grading problem, not the student's, so the grade needs the instructor."""
        return bool(self.lesson_errors)

    @property
    def points(self) -> tuple[float, float]:
        return (sum(o.points for o in self.outcomes.values()), sum(o.max_points for o in self.outcomes.values()))


class CalibrationError(ValueError):
    """The instructor's own solution did not earn every point under the grading sandbox: nothing is graded."""


# ------------------------------------------------------------------------------------------- reading submissions
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
        matches = [_text(c.get("source", "")) for c in code_cells
                   if not nbgrader_meta(c).get("grade_id") and first and _first_line(_text(c.get("source", ""))) == first]
        answers[exercise.name] = matches[0] if len(matches) == 1 else None
    return answers


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def read_submission(data: bytes) -> Any:
    """A notebook from bytes; ``ValueError`` says why it is unreadable."""
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as err:  # noqa: BLE001 - any parse failure is the same verdict for the student
        raise ValueError(f"not a readable notebook ({type(err).__name__}: {str(err)[:200]})") from None
    if not isinstance(nb.get("cells"), list):
        raise ValueError("not a readable notebook (it has no list of cells)")
    return nb


# -------------------------------------------------------------------------------------------- one submission
def _why(ended: str, limits: Limits) -> str:
    return {"time": f"did not finish within its time limit ({limits.cell_seconds:g} s per exercise cell, "
                    f"{limits.notebook_seconds:g} s per notebook) — an endless loop?",
            "memory": f"used more than the memory limit ({limits.memory_mb} MB)",
            "died": "ended the Python process (os._exit, exit() or a crash)"}.get(ended, f"stopped the run ({ended})")


def _reply(run: Run, index: int | None) -> dict[str, Any] | None:
    return None if index is None else run.replies.get(index)


def _error(reply: dict[str, Any]) -> str:
    ename, evalue = reply.get("ename", "Error"), str(reply.get("evalue", "")).strip()
    text = evalue if ename == "AssertionError" and evalue else f"{ename}: {evalue}" if evalue else ename
    return text[:300]


def _guard_report(run: Run, index: int | None) -> dict[str, Any] | None:
    for line in run.outputs.get(index, "").splitlines() if index is not None else []:
        if line.startswith(guard_module.MARKER):
            return json.loads(line[len(guard_module.MARKER):])
    return None


def score(steps: list[Step], run: Run, exercise: Exercise) -> tuple[bool, str, list[str]]:
    """``(passed, reason, notes)`` for one exercise from a finished run."""
    indices = [i for i, s in enumerate(steps) if s.exercise == exercise.name]
    roles = {steps[i].role: i for i in indices if steps[i].role != "guard"}
    guards = [i for i in indices if steps[i].role == "guard"]
    notes = []
    restored = _guard_report(run, guards[1]) if len(guards) > 1 else None
    if restored and restored.get("restored"):
        notes.append(f"{exercise.column}: your cell changed {', '.join(restored['restored'][:5])}, which the lesson "
                     "uses elsewhere; the grader put the original back")
    solution, visible, hidden = (_reply(run, roles.get(r)) for r in ("solution", "visible", "hidden"))
    if visible is None:
        return False, "not graded: the run stopped before its check", notes
    if solution is not None and solution.get("status") == "error":
        if solution.get("ename") == NOT_ANSWERED:
            return False, "not answered (the cell still raises NotImplementedError)", notes
        return False, f"your cell raised {_error(solution)}; an exercise cell must run without an error", notes
    if visible.get("status") == "error":
        if visible.get("ename") == NOT_ANSWERED:
            return False, "not answered (the exercise still raises NotImplementedError)", notes
        return False, f"the check says: {_error(visible)}", notes
    if "hidden" in roles:
        if hidden is None:
            return False, "not graded: the run stopped during the hidden tests", notes
        if hidden.get("status") == "error":
            return False, f"passes the visible check but not the hidden tests ({hidden.get('ename', 'Error')})", notes
    tampered = _guard_report(run, guards[-1]) if guards else None
    if tampered is None:
        return False, "not graded: the run stopped before the grader's last check", notes
    if tampered.get("tampered"):
        return False, (f"while the tests ran, your code changed {', '.join(tampered['tampered'][:5])}, which the tests "
                       "rely on; an exercise may only define its own names"), notes
    return True, "passed", notes


def zero_grade(name: str, exercises: list[Exercise], reason: str) -> NotebookGrade:
    """No marks for any exercise of notebook ``name``, for one ``reason``."""
    return NotebookGrade(name, {e.column: Outcome(0.0, e.points, reason) for e in exercises})


def grade_notebook(name: str, source: Any, exercises: list[Exercise], data: bytes | None, limits: Limits,
                   policy: Policy, env: dict[str, str]) -> NotebookGrade:
    """Grade one student's copy (``data``: the file's bytes, None if not submitted) of notebook ``name``."""
    grade = NotebookGrade(name)
    if data is None:
        return zero_grade(name, exercises, "not submitted")
    try:
        submission = read_submission(data)
    except ValueError as err:
        return zero_grade(name, exercises, str(err))
    answers = student_answers(submission, exercises)
    verdicts: dict[str, str] = {e.name: "the cell of this exercise is missing from the submitted notebook "
                                "(deleted, or its metadata and first line changed)" for e in exercises if answers[e.name] is None}
    token = secrets.token_hex(6)
    for _attempt in range(len(exercises) + 1):
        steps = plan(source, exercises, answers, set(verdicts), token)
        scratch = Path(tempfile.mkdtemp(prefix="course-grading-"))
        try:
            for sub in ("work", "tmp", "ipython"):
                (scratch / sub).mkdir()
            run_env = {**env, "TMPDIR": str(scratch / "tmp"), "IPYTHONDIR": str(scratch / "ipython"),
                       "COURSE_RESULTS_FILE": str(scratch / "results.json")}
            run_policy = Policy(policy.memory_mb, policy.file_size_mb, policy.deny, [str(scratch), *policy.writable],
                                policy.readable)
            run = execute(steps, limits, scratch, run_policy, run_env)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
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
            grade.notes.append(f"the lesson's cell {lesson_cell} {_why(run.ended, limits)} before any exercise ran; "
                               "nothing could be graded (tell your instructor)")
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


# ------------------------------------------------------------------------------------------------- the batch
def find_submissions(folder: Path, notebooks: list[str]) -> dict[str, dict[str, bytes | None]]:
    """``{student: {notebook: bytes or None}}`` for the student folders in ``folder``, read into memory now, so that
    nothing a submission does while it runs can change what another student handed in.

    A student's copy of ``01_masking.ipynb`` is the file of that name anywhere in their folder, else the one
    notebook whose name contains ``01_masking`` (``Copy of 01_masking.ipynb``, ``01_masking (1).ipynb``).
    """
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; expected one folder per student, each holding their notebooks")
    found: dict[str, dict[str, bytes | None]] = {}
    for student in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(p for p in student.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        mine: dict[str, bytes | None] = {}
        for name in notebooks:
            exact = [p for p in files if p.stem == name]
            loose = [p for p in files if name in p.stem]
            chosen = exact[0] if exact else loose[0] if len(loose) == 1 else None
            mine[name] = chosen.read_bytes() if chosen else None
        found[student.name] = mine
    if not found:
        raise ValueError(f"no student folders in {folder}; expected {folder}/<student>/<notebook>.ipynb")
    return found


def _repository_of(path: Path) -> Path:
    """The git checkout holding ``path`` (its history holds the solutions too), else ``path`` itself."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return path


def sandbox_policy(source_dir: Path, submissions: Path, out: Path, feedback: Path) -> Policy:
    """Hide the instructor's checkout, the submissions and the outputs; open the package, the Python installation,
    the data mirror and the caches again (for reading; caches for writing too)."""
    import course_utils
    from ..course_bert import cache_root
    from ..resources import mirror_candidates

    denied = [_repository_of(source_dir.resolve()), submissions.resolve(), feedback.resolve()]
    if out.exists():
        denied.append(out.resolve())
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    # Where a denied tree lies inside the cache (a checkout under ~/.cache), the sandbox can let kernels write into
    # the folders beside it but not create new ones next to it: make the ones lessons write to now.
    for folder in (home_cache / "huggingface", home_cache / "matplotlib", home_cache / "torch", cache_root()):
        folder.mkdir(parents=True, exist_ok=True)
    writable = ["/dev", str(home_cache), str(cache_root())]
    writable += [os.environ[v] for v in ("HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE") if os.environ.get(v)]
    package = Path(course_utils.__file__).resolve().parent
    readable = [str(package), sys.prefix, sys.base_prefix, *map(str, mirror_candidates())]
    readable += [p for p in sys.path if p and Path(p).is_dir()
                 and not any(d == Path(p).resolve() or d in Path(p).resolve().parents or Path(p).resolve() in d.parents
                             for d in denied)]
    return Policy(memory_mb=None, deny=[str(d) for d in denied], writable=writable, readable=readable)


def kernel_environment() -> dict[str, str]:
    """The grading kernels' environment: this one, quiet, offline unless asked, plots kept inline."""
    from ..course_bert import cache_root

    env = dict(os.environ)
    env.setdefault("COURSE_PROFILE", "quick")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.update({"COURSE_QUIET": "1", "PYTHONWARNINGS": "ignore", "MPLBACKEND": "module://matplotlib_inline.backend_inline",
                "MPLCONFIGDIR": str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"),
                "COURSE_CACHE_DIR": str(cache_root())})
    return env


def _subreaper() -> None:
    """Linux: orphans of grading kernels (double-forked daemons) become this process's children, so they are killed."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


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
        lines += ["**A cell of the lesson itself failed** while your notebook was graded (see the notes below). That "
                  "is likely a grading problem rather than your code, so some points may be missing for a reason that "
                  "is not yours: your instructor has been told to look at this grade.", ""]
    for grade in notebooks:
        lines += [f"## {grade.notebook}", "", "| exercise | points | |", "|---|---|---|"]
        for column, outcome in grade.outcomes.items():
            reason = outcome.reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {column.split(':', 1)[1]} | {outcome.points:g} / {outcome.max_points:g} | {reason} |")
        if grade.notes:
            lines += ["", "Notes:", *(f"- {n}" for n in grade.notes)]
        lines.append("")
    return "\n".join(lines)


def _likely_cause(text: str) -> str:
    if "PermissionError" in text or "Permission denied" in text:
        return ("a path the sandbox denied: the lesson needs a file inside a folder it hides (the checkout, the "
                "submissions, the feedback) or a cache outside ~/.cache")
    if "time limit" in text:
        return "a time limit too tight for this machine: raise --time-limit or --cell-time-limit"
    if "memory limit" in text:
        return "a memory limit too tight: raise --memory-mb"
    if "could not be loaded" in text or "not found" in text:
        return "the environment: data or a model the lesson loads is not reachable from here"
    return "the environment the kernels run in (see the error)"


def calibrate(names: list[str], sources: dict[str, Any], exercises: dict[str, list[Exercise]], limits: Limits,
              policy: Policy, env: dict[str, str]) -> dict[str, float]:
    """Grade each solution notebook as if a student had handed it in, under the same sandbox, limits and
    environment -> seconds per notebook. Raises ``CalibrationError`` (which lesson, which cell, the error and its
    likely cause) unless every one earns every point with no failing cell: then the grader, not the students, is
    wrong, and nothing may be graded."""
    seconds, problems = {}, []
    for name in names:
        start = time.perf_counter()
        grade = grade_notebook(name, sources[name], exercises[name], nbformat.writes(sources[name]).encode(),
                               limits.for_notebook(name), policy, env)
        seconds[name] = time.perf_counter() - start
        earned, possible = grade.points
        if earned == possible and not grade.needs_look:
            continue
        lost = [f"{column.split(':', 1)[1]}: {o.reason}" for column, o in grade.outcomes.items()
                if o.points < o.max_points]
        detail = "; ".join(grade.lesson_errors + lost)
        problems.append(f"{name}: the solution earns {earned:g} / {possible:g} ({detail[:1200]}). Likely cause: "
                        f"{_likely_cause(detail)}.")
    if problems:
        raise CalibrationError(
            "calibration failed: the instructor's own solution does not earn every point in the grading sandbox, so "
            "no student was graded.\n  " + "\n  ".join(problems) +
            "\nFix the environment (or the limits) and run again; --skip-calibration grades anyway.")
    return seconds


def autograde(submissions: Path | str, source: Path | str, out: Path | str, limits: Limits | None = None,
              feedback: Path | str | None = None, progress: bool | None = None,
              calibration: bool = True) -> dict[str, list[NotebookGrade]]:
    """Grade every student folder in ``submissions`` against the solution notebooks in ``source``; write the grade
    table ``out`` (CSV) and one Markdown feedback file per student (default: a ``feedback/`` folder beside ``out``).

    Only the notebooks that at least one student handed in are graded. First (unless ``calibration`` is False) each
    of their solution notebooks is graded under the same sandbox and limits (:func:`calibrate`); if one does not earn
    every point nothing is graded. Its time sets the per-notebook time limit when none was given (3 x + 60 s).
    Everything is read before the first submission runs and written after the last one, each file whole; a
    submission that crashes its kernel, hangs or breaks the grader for any reason costs only its own marks.
    """
    from tqdm.auto import tqdm

    submissions, source, out = Path(submissions), Path(source), Path(out)
    feedback = Path(feedback) if feedback is not None else out.parent / "feedback"
    sources = {p.stem: nbformat.read(p, as_version=4) for p in notebooks_in(source)}
    exercises = {name: find_exercises(nb, name) for name, nb in sources.items()}
    handed_in = find_submissions(submissions, list(sources))
    graded = [n for n in sources if exercises[n] and any(s[n] is not None for s in handed_in.values())]
    if not graded:
        raise ValueError(f"no submission in {submissions} holds one of the notebooks with exercises in {source}: "
                         f"{', '.join(n for n in sources if exercises[n])}")
    limits = limits or Limits()
    made_feedback = not feedback.exists()
    feedback.mkdir(parents=True, exist_ok=True)
    policy = sandbox_policy(source if source.is_dir() else source.parent, submissions, out, feedback)
    env = kernel_environment()
    _subreaper()
    if landlock_abi() == 0:
        print("warning: no Landlock filesystem sandbox on this system; submissions can read and write your files. "
              "Grade inside a container or as a separate user.", file=sys.stderr)
    per_notebook = {name: limits.for_notebook(name) for name in graded}
    if calibration:
        try:
            seconds = calibrate(graded, sources, exercises, limits, policy, env)
        except CalibrationError:
            if made_feedback and not any(feedback.iterdir()):
                feedback.rmdir()   # nothing graded, nothing left behind
            raise
        for name, took in seconds.items():
            if limits.notebook_seconds is None:
                per_notebook[name] = replace(per_notebook[name], notebook_seconds=3 * took + 60)
            print(f"calibration: {name}: the solution earns every point in {took:.0f} s; "
                  f"time limit per submission {per_notebook[name].notebook_seconds:.0f} s")
    results: dict[str, list[NotebookGrade]] = {student: [] for student in handed_in}
    jobs = [(student, name) for student in handed_in for name in graded]
    for student, name in tqdm(jobs, desc="grading", unit="notebook", disable=None if progress is None else not progress):
        try:
            grade = grade_notebook(name, sources[name], exercises[name], handed_in[student][name],
                                   per_notebook[name], policy, env)
        except Exception as err:  # noqa: BLE001 - the batch goes on; this student's notebook gets zero and the reason
            grade = zero_grade(name, exercises[name], f"grader error: {type(err).__name__}: {err}")
        results[student].append(grade)
    columns = [e.column for name in graded for e in exercises[name]]
    for student, notebooks in results.items():
        atomic_write_text(feedback / f"{student}.md", feedback_text(student, notebooks))
    atomic_write_text(out, grade_table(results, columns))
    return results
