"""One run of a graded notebook: the cells to run (the plan), and one fresh sandboxed kernel that runs them.

The plan is the instructor's notebook with the student's exercise bodies in place, each wrapped in :mod:`.guard`
cells; :func:`execute` runs it under the limits and reports each cell's reply, its printed output, and how the run
ended (to the end, or out of time, out of memory, or with the kernel gone).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
import psutil
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from traitlets import Unicode

from course_utils.profiles import PROFILES

from ..jupyter_kernel import this_environment_kernel_manager
from . import guard as guard_module
from .bubblewrap import sandboxed_command
from .cgroups import MemoryCgroup, MemoryHierarchy
from .exercises import Exercise, defined_names, split_hidden
from .sandbox import Policy


@dataclass(frozen=True)
class Limits:
    """Per submission of one notebook."""

    notebook_seconds: float | None = None  # one run of the whole notebook (None: twice its quick budget + 60 s)
    cell_seconds: float | None = None  # one exercise cell, or one check (None: 60 s)
    memory_mb: int | None = None  # the kernel and all it starts (None: the profile's budget + 1 GB)

    def for_notebook(self, name: str) -> Limits:
        """These limits with the defaults filled in for notebook ``name`` from the quick profile's budgets."""
        quick = PROFILES["quick"]
        seconds = self.notebook_seconds or 2 * (quick.seconds_budget_for(name) or 300.0) + 60
        return Limits(
            seconds,
            self.cell_seconds or DEFAULT_CELL_SECONDS,
            self.memory_mb or int((quick.peak_rss_mb_budget or 3072) + 1024),
        )

    def for_calibration(self, name: str) -> Limits:
        """The limits the instructor's solution is timed under: the flags given, else generous ones (this machine
        may be slow or busy; calibration is what measures it)."""
        quick = PROFILES["quick"]
        seconds = self.notebook_seconds or CALIBRATION_FACTOR * (quick.seconds_budget_for(name) or 300.0) + 600
        return replace(self.for_notebook(name), notebook_seconds=seconds, cell_seconds=self.cell_seconds or seconds)

    def calibrated(self, name: str, notebook_took: float, slowest_cell: float) -> Limits:
        """The limits a student's copy gets after the solution ran in ``notebook_took`` seconds, its slowest exercise
        cell or check in ``slowest_cell``: ``MARGIN`` times each plus a constant (a flag given still wins)."""
        base = self.for_notebook(name)
        return replace(
            base,
            notebook_seconds=self.notebook_seconds or MARGIN * notebook_took + 60,
            cell_seconds=self.cell_seconds or max(DEFAULT_CELL_SECONDS, MARGIN * slowest_cell + 30),
        )


DEFAULT_CELL_SECONDS = 60.0
MARGIN = 3  # a student's copy gets 3 times what the solution took on this machine (plus a constant)
CALIBRATION_FACTOR = 10  # the solution's own run may take up to 10 times the lesson's quick budget (plus 600 s)


@dataclass
class Step:
    """One cell the grading kernel runs."""

    role: str  # "lesson", "guard", "solution", "visible", "hidden"
    code: str
    exercise: str | None = None
    source_index: int | None = None


# ------------------------------------------------------------------------------------------------ the run plan
GUARD_FILE = str(Path(guard_module.__file__).resolve())


def guard_cell(holder: str, exports: tuple[str, ...], protected: tuple[str, ...] = ()) -> str:
    """The cell before a student's answer: a :class:`.guard.Guard` snapshot, kept in the kernel as ``holder``.

    The kernel runs guard.py by its path (standard library only), not ``import course_tools.grading.guard``: that
    would first import all of course_utils (torch, transformers: seconds), within the exercise's time limit, so a slow
    import would be blamed on the student's answer."""
    return (
        f"{holder} = __import__('runpy').run_path({GUARD_FILE!r}, run_name='_course_grading_guard')['Guard']("
        f"globals(), {list(exports)!r}, {list(protected)!r})"
    )


def checks_assign(source: Any, exercises: list[Exercise]) -> tuple[str, ...]:
    """Every name the lesson's checks (visible and hidden) assign: the guard keeps a student's cell off them all,
    whichever exercise it answers, so no answer can plant a reference a later check reads."""
    return tuple(dict.fromkeys(n for exercise in exercises for n in check_names(source, exercise)))


def check_names(source: Any, exercise: Exercise) -> list[str]:
    """The names one exercise's check cell binds, visible part and hidden tests."""
    return [n for part in split_hidden(source.cells[exercise.check_index].source) for n in defined_names(part)]


def plan(
    source: Any, exercises: list[Exercise], answers: dict[str, str | None], skip: set[str], token: str
) -> list[Step]:
    """The cells to run: the lesson's own cells, and for each gradable exercise the student's cell and the
    instructor's checks, wrapped in guard cells. Exercises without an answer or in ``skip`` are left out whole."""
    by_solution = {e.solution_index: e for e in exercises}
    by_check = {e.check_index: e for e in exercises}
    active = {e.name for e in exercises if answers.get(e.name) is not None and e.name not in skip}
    protected = checks_assign(source, exercises)
    steps: list[Step] = []
    for index, cell in enumerate(source.cells):
        if cell.cell_type != "code":
            continue
        exercise = by_solution.get(index) or by_check.get(index)
        if exercise is None:
            steps.append(Step("lesson", cell.source, None, index))
        elif exercise.name in active and index == exercise.solution_index:
            steps += answer_steps(exercise, answers[exercise.name] or "", token, protected)
        elif exercise.name in active:
            steps += check_steps(source, exercise, token)
    return steps


def answer_steps(exercise: Exercise, answer: str, token: str, protected: tuple[str, ...]) -> list[Step]:
    """An answer in the exercise's place, between the guard's snapshot and its undoing of what the answer rebound
    (``protected``: the names the lesson's checks assign, :func:`checks_assign`)."""
    holder = f"_grading_{token}_{exercise.solution_index}"
    index = exercise.solution_index
    return [
        Step("guard", guard_cell(holder, exercise.exports, protected), exercise.name, index),
        Step("solution", answer, exercise.name, index),
        Step("guard", f"{holder}.after_solution()", exercise.name, index),
    ]


def lesson_steps_between(source: Any, exercise: Exercise) -> list[Step]:
    """The lesson's code cells between an exercise and its check (they run after the answer, before the check)."""
    return [
        Step("lesson", cell.source, None, index)
        for index, cell in enumerate(source.cells)
        if exercise.solution_index < index < exercise.check_index and cell.cell_type == "code"
    ]


def check_steps(source: Any, exercise: Exercise, token: str) -> list[Step]:
    """The visible check, the hidden tests, and the guard's last look: did anything the tests rely on change?"""
    holder = f"_grading_{token}_{exercise.solution_index}"
    index = exercise.check_index
    visible, hidden = split_hidden(source.cells[index].source)
    steps = [Step("visible", visible, exercise.name, index)]
    if hidden.strip():
        steps.append(Step("hidden", hidden, exercise.name, index))
    between = [n for s in lesson_steps_between(source, exercise) for n in defined_names(s.code)]
    assigned = between + check_names(source, exercise)  # the lesson's own
    steps.append(Step("guard", f"{holder}.after_check({assigned!r})", exercise.name, index))
    return steps


# ------------------------------------------------------------------------------------------------- one kernel run
@dataclass
class Run:
    replies: dict[int, dict[str, Any]]  # step index -> execute_reply content
    outputs: dict[int, str]  # step index -> stdout text
    ended: str | None  # None: ran to the end; else "time", "memory", "died", or an error
    at: int | None  # the step running when it ended
    seconds: dict[int, float] = field(default_factory=dict)  # step index -> how long it ran (finished steps)


class SandboxedKernelManager(AsyncKernelManager):
    """Starts the kernel through the sandbox launcher: ``python -I -S .../sandbox.py POLICY -- <kernel command>``
    (:func:`.sandbox.launcher`), which imports only the standard library before it ``exec``s the kernel, inside
    bubblewrap where the policy says so (:func:`.bubblewrap.sandboxed_command`)."""

    policy_file = Unicode("")

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        return sandboxed_command(self.policy_file, super().format_kernel_cmd(extra_arguments))


def _descendants(known: set[int]) -> list[psutil.Process]:
    """Processes started by this process (directly, or orphans re-parented to it) that were not there before."""
    try:
        return [p for p in psutil.Process().children(recursive=True) if p.pid not in known]
    except psutil.Error:
        return []


def _kill(processes: list[psutil.Process]) -> None:
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(processes, timeout=5)


def execute(steps: list[Step], limits: Limits, scratch: Path, policy: Policy, env: dict[str, str]) -> Run:
    """Run ``steps`` in one fresh sandboxed kernel; never raises for anything the code in the steps does."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s.code, metadata={"step": i}) for i, s in enumerate(steps)]
    )
    # where the platform lets the grader make one, a cgroup of its own holds the memory limit (:mod:`.cgroups`)
    group = (
        MemoryCgroup(MemoryHierarchy(policy.cgroup_version, Path(policy.cgroup_parent)), limits.memory_mb)
        if policy.cgroup_parent and limits.memory_mb
        else None
    )
    if group is not None:
        policy = replace(policy, cgroup_procs=str(group.procs))
    policy_file = scratch / "policy.json"
    policy.save(policy_file)
    # the connection file lies in the scratch folder, which the kernel may read and write whatever the sandbox
    km = this_environment_kernel_manager(
        SandboxedKernelManager, policy_file=str(policy_file), connection_file=str(scratch / "kernel.json")
    )
    replies: dict[int, dict[str, Any]] = {}
    state: dict[str, Any] = {"at": None, "memory": False}
    deadline = time.monotonic() + limits.notebook_seconds

    def timeout_for(cell: Any) -> int:
        remaining = max(1, int(deadline - time.monotonic()))
        return (
            remaining
            if steps[cell.metadata["step"]].role == "lesson"
            else max(1, min(remaining, int(limits.cell_seconds)))
        )

    seconds: dict[int, float] = {}

    def started(cell: Any, cell_index: int, **_: Any) -> None:
        state["at"], state["since"] = cell_index, time.monotonic()

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any] | None = None, **_: Any) -> None:
        replies[cell_index] = dict((execute_reply or {}).get("content", {}))
        seconds[cell_index] = time.monotonic() - state.get("since", time.monotonic())

    known = {p.pid for p in psutil.Process().children(recursive=True)}
    stop = threading.Event()

    def watch_memory() -> None:  # the kernel and anything it started, polled; over the limit, all of it is killed
        while not stop.wait(0.2):
            processes = _descendants(known)
            rss = 0
            for process in processes:
                try:
                    rss += process.memory_info().rss
                except psutil.Error:
                    pass
            if rss > limits.memory_mb * 2**20:
                state["memory"] = True
                _kill(processes)
                return

    watcher = threading.Thread(target=watch_memory, daemon=True)
    client = NotebookClient(
        nb,
        km=km,
        timeout=int(limits.notebook_seconds),
        timeout_func=timeout_for,
        allow_errors=True,
        record_timing=False,
        interrupt_on_timeout=False,
        resources={"metadata": {"path": str(scratch / "work")}},
        on_cell_start=started,
        on_cell_executed=executed,
    )
    ended: str | None = None
    watcher.start()
    log = open(scratch / "kernel.log", "wb")
    try:
        client.execute(env=env, stdout=log, stderr=log)
    except CellTimeoutError:
        ended = "time"
    except DeadKernelError:
        ended = "died"
    except Exception as err:  # noqa: BLE001 - a kernel that cannot start or talk is reported, not raised
        ended = f"{type(err).__name__}: {str(err)[:300]}"
    finally:
        stop.set()
        watcher.join()
        _kill(_descendants(known))
        try:
            run_sync(km.shutdown_kernel)(now=True)
        except Exception:  # noqa: BLE001 - already gone
            pass
        log.close()
        if group is not None:
            state["memory"] = state["memory"] or group.oom_killed()
            group.close()
    if ended and not replies:  # it never ran a cell: say what the kernel printed
        lines = (scratch / "kernel.log").read_text(errors="replace").strip().splitlines()
        ended += f" (kernel: {lines[-1][:300]})" if lines else ""
    if state["memory"]:
        ended = "memory"
    outputs = {}
    for i, cell in enumerate(nb.cells):
        outputs[i] = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    return Run(replies, outputs, ended, state["at"] if ended else None, seconds)
