"""Wrong answers: each exercise's plausible mistakes, scored by the exercise's own checks as the grader scores a
student, so that a check that would give points to a wrong answer is found before a student finds it.

An instructor lists them per notebook in ``notebooks/wrong_answers/<notebook>.toml``, one table per wrong answer,
named by the exercise's ``grade_id`` (the released notebooks are made from the notebooks alone, so students never
receive them)::

    [[vowels]]
    why = "counts lower-case vowels only"
    code = '''
    def vowels(s):
        return sum(ch in "aeiou" for ch in s)
    '''
    profiles = ["quick", "full"]   # optional: where the mistake shows (e.g. not with the rehearsal's random weights)

    [[vowels]]
    right = true                   # a correct alternative, written apart from the solution: it must earn the points
    why = "upper case folded first, a set lookup"
    code = '''
    def vowels(s):
        return sum(ch in set("aeiou") for ch in s.lower())
    '''

Each wrong answer takes the place of the exercise's cell, as a student's would; then the lesson's cells between the
exercise and its check, the visible check and the hidden tests run, inside the grader's guard cells
(:func:`.runner.answer_steps`, :func:`.runner.check_steps`), and :func:`.scoring.score` decides, as it does for a
student. Beside them the released blank (which must earn nothing) and the instructor's solution (which must earn every
point) are scored the same way. All of it runs in the one kernel that runs the lesson, just before the exercise's own
cell, so each trial sees the lesson's state at that point; the lesson then goes on with the solution as usual.

``python -m course_tools.grading wrong-answers`` runs it; the rehearsal (``make rehearse``, part of ``make test``) runs
it on every notebook. Introduced for instructors and maintainers (issue 40).
"""

from __future__ import annotations

import secrets
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from course_utils.profiles import PROFILES, get_profile

from .exercises import Exercise, ExerciseError, find_exercises, without_magics
from .runner import Run, Step, answer_steps, check_steps, checks_assign, lesson_steps_between
from .scoring import score

FOLDER = Path("notebooks") / "wrong_answers"
MINIMUM = 5  # wrong answers each exercise should have (issues 40, 54); fewer is reported, not an error
MINIMUM_RIGHT = 2  # correct alternatives each exercise should have (issue 54); fewer is reported, not an error
TRIAL = "course_trial"  # metadata of the cells a trial runs: the notebook runner does not time them as lesson cells


@dataclass(frozen=True)
class WrongAnswer:
    exercise: str  # the solution cell's grade_id
    why: str  # the mistake, in a few words
    code: str  # the cell a student with that mistake would write
    profiles: tuple[str, ...] | None = None  # the profiles whose data can expose it (None: every profile)
    right: bool = False  # a correct alternative: it must earn the points (a check that refuses it is too narrow)


@dataclass(frozen=True)
class Trial:
    """One answer scored against one exercise's checks."""

    exercise: str  # the exercise's column, e.g. "05_domain_adaptive_pretraining:sample_pair"
    answer: str  # "blank", "solution", "wrong: <why>" or "right: <why>"
    expected: bool  # should it earn the points?
    passed: bool
    reason: str  # the grader's reason, as a student would read it
    seconds: float = 0.0  # how long its cells ran

    @property
    def ok(self) -> bool:
        return self.passed == self.expected

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def wrong_answers_path(folder: Path, notebook: str) -> Path:
    return Path(folder) / f"{notebook}.toml"


def load_wrong_answers(path: Path, exercises: list[Exercise]) -> dict[str, list[WrongAnswer]]:
    """The wrong answers in ``path`` by exercise name ({} when there is no file); ``ExerciseError`` names the file and
    what is wrong: an unknown exercise, a missing ``why`` or ``code``, code that does not parse, a repeated answer."""
    path = Path(path)
    found: dict[str, list[WrongAnswer]] = {e.name: [] for e in exercises}
    if not path.exists():
        return found
    try:
        tables = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ExerciseError(f"{path}: not valid TOML ({err})") from None
    for name, entries in tables.items():
        if name not in found:
            raise ExerciseError(
                f"{path}: no exercise {name!r} in the notebook; its exercises are {', '.join(found) or 'none'}"
            )
        if not isinstance(entries, list):
            raise ExerciseError(f"{path}: write each wrong answer of {name!r} as a [[{name}]] table")
        for number, entry in enumerate(entries, 1):
            where = f"{path}, {name} #{number}"
            why, code = entry.get("why"), entry.get("code")
            if not isinstance(why, str) or not why.strip() or not isinstance(code, str) or not code.strip():
                raise ExerciseError(f"{where}: needs why = \"the mistake\" and code = '''the cell''' (both non-empty)")
            unknown = set(entry) - {"why", "code", "profiles", "right"}
            if unknown:
                raise ExerciseError(
                    f"{where}: unknown key(s) {', '.join(sorted(unknown))}; accepted: why, code, profiles, right"
                )
            right = entry.get("right", False)
            if not isinstance(right, bool):
                raise ExerciseError(f"{where}: right is true (a correct alternative) or false; got {right!r}")
            profiles = entry.get("profiles")
            if profiles is not None and (
                not isinstance(profiles, list) or not profiles or not set(profiles) <= set(PROFILES)
            ):
                raise ExerciseError(f"{where}: profiles is a list of {', '.join(PROFILES)}; got {profiles!r}")
            try:
                compile(without_magics(code), where, "exec")
            except SyntaxError as err:
                raise ExerciseError(f"{where}: the code does not parse (line {err.lineno}: {err.msg})") from None
            if any(code.strip() == other.code.strip() for other in found[name]):
                raise ExerciseError(f"{where}: the same code as an earlier answer")
            found[name].append(WrongAnswer(name, why.strip(), code, tuple(profiles) if profiles else None, right))
    return found


def candidates(source: Any, exercise: Exercise, wrong: list[WrongAnswer]) -> list[tuple[str, str, bool]]:
    """(label, cell, should pass) for one exercise: the released blank, each wrong answer and correct alternative,
    the solution."""
    return [
        ("blank", exercise.prompt, False),
        *((f"{'right' if w.right else 'wrong'}: {w.why}", w.code, w.right) for w in wrong),
        ("solution", source.cells[exercise.solution_index].source, True),
    ]


def run_steps(client: Any, steps: list[Step]) -> Run:
    """Run ``steps`` in ``client``'s kernel (a started ``nbclient.NotebookClient``) -> the replies the grader reads.

    Errors are expected (a wrong answer fails its check), so every cell may raise; the reply is read from the cell's
    outputs: an ``error`` output is the failed reply, its ``ename`` and ``evalue``. nbclient stores a cell it ran at
    its index in the notebook, so each trial cell runs as a cell appended for the moment (``TRIAL`` in its metadata)
    and is taken out again. Once the answer or a check has failed, the verdict is decided
    (:func:`.scoring.score` reads the first failure): the steps after it are skipped (``{"status": "skipped"}``), all
    but the guard's, which put back what the answer changed."""
    replies, outputs, seconds = {}, {}, {}
    decided = False
    for i, step in enumerate(steps):
        if decided and step.role != "guard":
            replies[i], outputs[i] = {"status": "skipped"}, ""
            continue
        cell = nbformat.v4.new_code_cell(step.code, metadata={"tags": ["raises-exception"], TRIAL: True})
        start = time.perf_counter()
        if step.code.strip():
            client.nb.cells.append(cell)
            try:
                client.execute_cell(cell, len(client.nb.cells) - 1, store_history=False)
            finally:
                client.nb.cells.pop()
        seconds[i] = time.perf_counter() - start
        error = next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)
        replies[i] = (
            {"status": "error", "ename": error.get("ename", ""), "evalue": error.get("evalue", "")}
            if error
            else {"status": "ok"}
        )
        outputs[i] = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        decided = decided or (error is not None and step.role in ("solution", "visible", "hidden"))
    return Run(replies, outputs, None, None, seconds)


def trials_for(
    client: Any, source: Any, exercise: Exercise, wrong: list[WrongAnswer], protected: tuple[str, ...]
) -> list[Trial]:
    """Score the blank, each wrong answer and the solution of ``exercise`` in ``client``'s kernel, as the grader
    would: the answer in the exercise's place, the lesson's cells up to the check, the check and its hidden tests
    (``protected``: the names the lesson's checks assign, which no answer may set)."""
    trials = []
    for label, code, expected in candidates(source, exercise, wrong):
        token = secrets.token_hex(4)
        steps = answer_steps(exercise, code, token, protected) + lesson_steps_between(source, exercise)
        steps += check_steps(source, exercise, token)
        run = run_steps(client, steps)
        passed, reason, _ = score(steps, run, exercise)
        trials.append(Trial(exercise.column, label, expected, passed, reason, sum(run.seconds.values())))
    return trials


class WrongAnswerTrials:
    """Called before each cell of a running notebook: before an exercise's cell, its trials run in the same kernel."""

    def __init__(self, source: Any, notebook: str, folder: Path, profile: str | None = None) -> None:
        self.source = source
        self.profile = profile or get_profile().name
        self.exercises = {e.solution_index: e for e in find_exercises(source, notebook)}
        self.wrong = load_wrong_answers(wrong_answers_path(folder, notebook), list(self.exercises.values()))
        self.protected = checks_assign(source, list(self.exercises.values()))
        self.trials: list[Trial] = []

    def tried_here(self, wrong: WrongAnswer) -> bool:
        return wrong.profiles is None or self.profile in wrong.profiles

    def before_cell(self, client: Any, index: int) -> None:
        exercise = self.exercises.get(index)
        if exercise is not None:
            here = [w for w in self.wrong[exercise.name] if self.tried_here(w)]
            self.trials += trials_for(client, self.source, exercise, here, self.protected)

    def summary(self) -> list[dict[str, Any]]:
        """Per exercise: how many wrong answers it has and rejects, and whether blank and solution scored right."""
        rows = []
        for exercise in self.exercises.values():
            mine = [t for t in self.trials if t.exercise == exercise.column]
            wrong = [t for t in mine if t.answer.startswith("wrong: ")]
            right = [t for t in mine if t.answer.startswith("right: ")]
            rows.append(
                {
                    "exercise": exercise.column,
                    "profile": self.profile,
                    "not_tried": [w.why for w in self.wrong[exercise.name] if not self.tried_here(w) and not w.right],
                    "right_not_tried": [w.why for w in self.wrong[exercise.name] if not self.tried_here(w) and w.right],
                    "wrong_answers": len(wrong),
                    "rejected": sum(not t.passed for t in wrong),
                    "accepted": [t.answer.removeprefix("wrong: ") for t in wrong if t.passed],
                    "right_answers": len(right),
                    "right_accepted": sum(t.passed for t in right),
                    "refused": [t.answer.removeprefix("right: ") for t in right if not t.passed],
                    "blank_earns_nothing": all(t.ok for t in mine if t.answer == "blank"),
                    "solution_earns_all": all(t.ok for t in mine if t.answer == "solution"),
                    "failures": [f"{t.answer}: {t.reason}" for t in mine if not t.ok],
                    "ran": bool(mine),
                    "seconds": round(sum(t.seconds for t in mine), 2),
                }
            )
        return rows


def problems(rows: list[dict[str, Any]]) -> list[str]:
    """What must be fixed: a wrong answer that earns the points, a correct alternative or the solution that does not
    earn them all, a blank that earns any, an exercise whose trials never ran (the notebook stopped before it)."""
    out = []
    for row in rows:
        if not row["ran"]:
            out.append(f"{row['exercise']}: not tried (the notebook stopped before this exercise)")
            continue
        out += [f"{row['exercise']}: {failure}" for failure in row["failures"]]
    return out


def table(rows: list[dict[str, Any]], minimum: int = MINIMUM, minimum_right: int = MINIMUM_RIGHT) -> str:
    """The terminal summary: one line per exercise: wrong answers rejected, right alternatives accepted, blank,
    solution."""
    lines = [f"{'exercise':<58} wrong rejected             right accepted       blank  solution  seconds"]
    for row in rows:
        listed = row["wrong_answers"] + len(row.get("not_tried", []))
        short = f" (fewer than {minimum})" if listed < minimum else ""
        short += f" +{len(row['not_tried'])} not in {row.get('profile')}" if row.get("not_tried") else ""
        right_listed = row.get("right_answers", 0) + len(row.get("right_not_tried", []))
        right_short = f" (fewer than {minimum_right})" if right_listed < minimum_right else ""
        right_short += f" +{len(row['right_not_tried'])} not here" if row.get("right_not_tried") else ""
        right = f"{row.get('right_accepted', 0):>2} of {row.get('right_answers', 0):<2}{right_short}"
        blank = "0 pts" if row["blank_earns_nothing"] else "EARNS"
        solution = "all" if row["solution_earns_all"] else "FAILS"
        lines.append(
            f"{row['exercise']:<58} {row['rejected']:>2} of {row['wrong_answers']:<2}{short:<18} {right:<20} "
            f"{blank:<6} {solution:<9} {row.get('seconds', 0):>7.1f}"
        )
    return "\n".join(lines)
