"""Every pytest run (unit tests and the notebooks under nbval) is offline, in the quick profile, quiet, and plays a
student: without the offline mirror.

Notebook kernels started by nbval inherit this environment. ``$COURSE_DATA_DIR`` points at a stand-in for the hub
(tests/hub_standin.py) that holds only the datasets the registry takes from the hub, so a lesson that needs anything
else of ``../shared/data`` fails here as it would for a student. Fixtures live in tests/conftest.py.
"""

import json
import os
import sys
import time
from pathlib import Path

import pytest

# `make test` runs in lanes (pytest-xdist, `-n 2`): each worker gets its own share of the cores, and its kernels and
# child processes inherit it, with as many threads as it has cores. Two notebooks on one core each finish sooner
# than one after the other on two, and no OpenMP team waits on a core that another lane holds (maintainers' guide,
# "Where the time goes").
_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and hasattr(os, "sched_setaffinity"):
    _lanes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    _cores = sorted(os.sched_getaffinity(0))
    _mine = _cores[int(_worker.removeprefix("gw")) % _lanes :: _lanes] if len(_cores) >= _lanes else _cores
    os.sched_setaffinity(0, _mine)
    os.environ["OMP_NUM_THREADS"] = str(max(1, len(_cores) // _lanes))  # before torch loads
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import hub_standin  # noqa: E402

os.environ.setdefault("COURSE_PROFILE", "quick")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("COURSE_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Built from the mirror ($COURSE_DATA_DIR if a developer set one, else ../shared/data), then put in its place, so a
# test run never sees the rest of the mirror, whatever the shell had set.
_standin = Path(os.environ.get("COURSE_HUB_STANDIN") or hub_standin.ROOT / "build" / "hub-standin").resolve()
_mirror = Path(os.environ.get("COURSE_DATA_DIR") or hub_standin.default_mirror()).resolve()
if _mirror != _standin:
    if not _mirror.is_dir():
        raise RuntimeError(
            f"`make test` is the maintainers' and CI's check: it runs offline, with the hub's datasets served from the "
            f"offline mirror, which is not at {_mirror} (set $COURSE_DATA_DIR to where it is). To run every lesson as "
            "a student, online: `make course`."
        )
    hub_standin.build(_standin, _mirror)
os.environ["COURSE_DATA_DIR"] = str(_standin)
os.environ["COURSE_HUB_STANDIN"] = str(_standin)
os.environ["COURSE_TEST_MIRROR"] = str(_mirror)  # the rehearsal's tests take the full profile's data from here


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """The lessons' cells (nbval items) carry the ``notebooks`` marker, so ``-m`` can select or leave out that tier,
    and those of the lessons in ``EVERY_CORE`` the ``every_core`` marker. Then the longest units of work come first
    (``unit_of``, ``expected_seconds``), so that the lanes end together; the order within a unit is kept."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
            if item.path.stem in EVERY_CORE:
                item.add_marker(pytest.mark.every_core)
    expected = expected_seconds()
    items.sort(key=lambda item: -expected.get(unit_of(item.nodeid), 1.0))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: known only where it is installed
def pytest_xdist_make_scheduler(config, log):
    """The lanes' scheduler: pytest-xdist's by scope, a scope being ``unit_of`` a test, handed out in the collection's
    order (longest first, above) to whichever lane is free."""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _reschedule(self, node) -> None:
            """A lane takes its next unit only with one test left (a worker needs to know its next test before it
            runs its last one); xdist's own takes more while three are left, and one-test units (a rehearsal) pile
            up on one lane."""
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
            elif self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)

    config.option.loadscopereorder = False
    return Units(config, log)


def pytest_runtest_logreport(report):
    """Where `make test` spends its time, lane by lane (`python -m course_tools.bench timeline`): where
    $COURSE_TEST_TIMELINE names a file (the Makefile's `test` sets it), one line per test phase is appended to it: lane,
    unit, seconds and when it ended. Under xdist only the controller writes, for every lane (a lane's reports reach it
    with their worker), so no two processes write to the file."""
    timeline = os.environ.get("COURSE_TEST_TIMELINE")
    if not timeline or os.environ.get("PYTEST_XDIST_WORKER") or (report.when != "call" and report.duration < 0.5):
        return
    node = getattr(report, "node", None)  # set on the reports the controller receives from a lane
    line = {
        "lane": node.gateway.id if node is not None else "main",
        "unit": unit_of(report.nodeid),
        "test": report.nodeid,
        "phase": report.when,
        "seconds": round(report.duration, 3),
        "end": time.time(),
    }
    with open(timeline, "a") as out:
        out.write(json.dumps(line) + "\n")


def unit_of(nodeid: str) -> str:
    """The unit of work one lane runs in order: a notebook's cells (they share a kernel), a test module's tests (they
    share its fixtures), or one rehearsal (each a notebook run of its own)."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path.endswith("test_rehearsal.py") else path


def expected_seconds() -> dict[str, float]:
    """Unit -> its seconds on 2 cores: the notebooks' and rehearsals' from the committed reports (docs/results/), the
    slowest test modules' as measured (pytest --durations, 2026-11-28); for the order of the lanes' work only."""
    import json

    found = {f"tests/{name}.py": seconds for name, seconds in SLOW_MODULES.items()}
    reports = {
        "quick.json": "notebooks/{}.ipynb",
        "rehearsal.json": "tests/test_rehearsal.py::test_the_full_profile_rehearses[{}]",
    }
    for name, unit in reports.items():
        path = Path(__file__).resolve().parent / "docs" / "results" / name
        if path.is_file():
            found.update(
                {unit.format(nb["name"]): float(nb["seconds"]) for nb in json.loads(path.read_text())["notebooks"]}
            )
    return found


# Lessons whose claims time work against the whole machine (07: a batch against one sentence at a time, threads):
# `make test` runs them alone on every core, before the lanes, as a student does (a lane has one core).
EVERY_CORE = {"07_efficiency_and_the_bert_family"}

SLOW_MODULES = {"test_grading": 125.0, "test_bench": 80.0, "test_adaptation": 35.0, "test_site": 20.0}
