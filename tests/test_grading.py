"""Release and autograding: markers, student versions, and a batch of hostile submissions graded in one run.

The batch uses ``fixtures/grading/01_tiny.ipynb`` (three exercises: ``double`` 1 point, ``area`` 2, ``vowels`` 1, with
lesson cells before, between and after them). Each student below is one fixture submission: the released notebook
with the reference answers, except for what that student does. Every student's grade is checked, so a hostile
submission that changed anyone else's marks fails the test of that other student.
"""

from __future__ import annotations

import ast
import csv
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_tools.grading import find_exercises, release, release_notebook
from course_tools.grading.__main__ import main as grading_main
from course_tools.grading.bubblewrap import bubblewrap_prefix, mount_options, sandboxed_command
from course_tools.grading.cgroups import MemoryCgroup, MemoryHierarchy, find_hierarchy, join_prefix
from course_tools.grading.exercises import (
    TEXT_STUB,
    ExerciseError,
    find_written_answers,
    heading_anchor,
    rubric_of,
    split_hidden,
    strip_solutions,
    without_magics,
)
from course_tools.grading.isolation import ISOLATION_VARIABLE, Isolation, Mechanism, detect_isolation, probe_bubblewrap
from course_tools.grading.runner import Limits, SandboxedKernelManager, Step, execute, guard_cell
from course_tools.grading.sandbox import Policy, around, landlock_abi, launcher
from course_tools.grading.submissions import student_writing
from course_tools.jupyter_kernel import this_environment_kernel_manager

release_module = importlib.import_module("course_tools.grading.release")  # the package's `release` is the function
isolation_module = importlib.import_module("course_tools.grading.isolation")

FIXTURE = Path(__file__).parent / "fixtures" / "grading" / "01_tiny.ipynb"
NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("[0-9]*.ipynb"))
HAS_LANDLOCK = landlock_abi() > 0
BUBBLEWRAP = probe_bubblewrap()  # bwrap on PATH, and able to mount what the grader mounts
NEEDS_BUBBLEWRAP = pytest.mark.skipif(not BUBBLEWRAP.available, reason=f"bubblewrap unusable here: {BUBBLEWRAP.detail}")
FULL = {"double": 1, "area": 2, "vowels": 1}
REFERENCE = {
    e.name: nbformat.read(FIXTURE, 4).cells[e.solution_index].source
    for e in find_exercises(nbformat.read(FIXTURE, 4), "01_tiny")
}


# ------------------------------------------------------------------------------------------------ markers, release
def test_strip_solutions_keeps_prompt_and_indentation():
    source = "def f(x):\n    '''Doc.'''\n    # hint: use g\n    ### BEGIN SOLUTION\n    return g(x)\n    ### END SOLUTION\nprint(1)"  # noqa: E501
    assert (
        strip_solutions(source)
        == "def f(x):\n    '''Doc.'''\n    # hint: use g\n    raise NotImplementedError()\nprint(1)"
    )


def test_split_hidden():
    visible, hidden = split_hidden("a = 1\nassert a\n### BEGIN HIDDEN TESTS\nassert a == 1\n### END HIDDEN TESTS")
    assert visible == "a = 1\nassert a\n" and hidden == "assert a == 1"


@pytest.mark.parametrize(
    "source, message",
    [
        ("### BEGIN SOLUTION\nx = 1", "line 1: .* never closed"),
        ("x = 1\n### END SOLUTION", "line 2: .* without"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "line 2: .* inside another"),
        ("### BEGIN SOLUTION\nx = '### END SOLUTION'\n### END SOLUTION", "line 2: .* not the marker"),
        ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION  # done", "line 3: .* not the marker"),
        (
            "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS",
            "line 4: .* not a grade cell",
        ),
    ],
)
def test_bad_markers_say_which_notebook_cell_and_line(source, message):
    """Anything nbgrader would read as a marker (a line that merely contains ``BEGIN SOLUTION``…) must be the
    course's marker, alone on its line, in a cell where it belongs: otherwise nbgrader and the grader would disagree."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# intro"),
            nbformat.v4.new_code_cell(
                source, metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "x"}}
            ),
        ]
    )
    with pytest.raises(ExerciseError, match="^nb, cell 1, " + message):
        find_exercises(nb, "nb")


@pytest.mark.parametrize(
    "cell, message",
    [
        (nbformat.v4.new_markdown_cell("Write it between\n### BEGIN SOLUTION\nand the end."), "in a markdown cell"),
        (
            nbformat.v4.new_code_cell("x = 1\n### BEGIN HIDDEN TESTS\nassert x\n### END HIDDEN TESTS"),
            "not a grade cell",
        ),
        (nbformat.v4.new_code_cell("x = 1\n### END SOLUTION"), "no nbgrader metadata"),
    ],
)
def test_markers_outside_exercise_cells_are_refused(cell, message):
    nb = nbformat.read(FIXTURE, 4)
    nb.cells.insert(1, cell)
    with pytest.raises(ExerciseError, match="^01_tiny, cell 1, line 2: .*" + message):
        release_notebook(nb, "01_tiny")


def test_grade_cell_needs_points_and_a_solution_before_it():
    grade = {"nbgrader": {"grade": True, "solution": False, "grade_id": "c", "points": 1}}
    with pytest.raises(ExerciseError, match="no solution cell before it"):
        find_exercises(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert 1", metadata=grade)]), "nb")
    nb = nbformat.read(FIXTURE, 4)
    del nb.cells[4].metadata["nbgrader"]["points"]
    with pytest.raises(ExerciseError, match="points"):
        find_exercises(nb, "01_tiny")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_course_notebook_releases_cleanly(path):
    """At least 3 exercises; the student version has no answer, no hidden test, no output; and no later lesson cell
    uses a name an exercise defines, so a student version runs on whatever the student wrote."""
    nb = nbformat.read(path, 4)
    exercises = find_exercises(nb, path.stem)
    assert len(exercises) >= 3, f"{path.name} has {len(exercises)} exercises; the course asks for at least 3"
    student = release_notebook(nb, path.stem)
    text = nbformat.writes(student)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS"):
        assert marker not in text
    assert all(not c.get("outputs") for c in student.cells if c.cell_type == "code")
    for e in exercises:
        assert "raise NotImplementedError()" in student.cells[e.solution_index].source
        # what the grader matches a student's cell against is what nbgrader released
        assert student.cells[e.solution_index].source == e.prompt
        later = [c for i, c in enumerate(nb.cells) if i > e.check_index and c.cell_type == "code"]
        used = {n.id for c in later for n in ast.walk(ast.parse(without_magics(c.source))) if isinstance(n, ast.Name)}
        assert not set(e.exports) & used, f"{path.stem}: cells after exercise {e.name} use {set(e.exports) & used}"


def test_release_refuses_the_source_folder_and_writes_nothing_on_error(tmp_path):
    with pytest.raises(ValueError, match="overwrite the solutions"):
        release(FIXTURE.parent, FIXTURE.parent)
    broken = tmp_path / "src"
    broken.mkdir()
    nb = nbformat.read(FIXTURE, 4)
    nbformat.write(nb, broken / "01_good.ipynb")
    nb.cells[3].source += "\n### BEGIN SOLUTION"
    nbformat.write(nb, broken / "02_bad.ipynb")
    with pytest.raises(ExerciseError, match="02_bad, cell 3, line 6: .* never closed"):
        release(broken, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_release_uses_nbgrader_and_refuses_a_marker_it_left(monkeypatch):
    """The student version is what nbgrader's ClearSolutions, ClearOutput and ClearHiddenTests make; should a marker
    ever survive them, the release stops instead of handing out a solution."""
    names = [type(p).__name__ for p in release_module.nbgrader_preprocessors()]
    assert names == ["ClearSolutions", "ClearOutput", "ClearHiddenTests"]
    monkeypatch.setattr(release_module, "nbgrader_preprocessors", lambda: [])
    with pytest.raises(ExerciseError, match="01_tiny, cell 3: still contains 'BEGIN SOLUTION' after release"):
        release_notebook(nbformat.read(FIXTURE, 4), "01_tiny")


def test_sandbox_rules_never_cover_a_denied_folder(tmp_path):
    """The rules cover everything else, but no link may lead a rule into the denied tree (a rule follows links)."""
    secret = tmp_path / "course" / "secret"
    secret.mkdir(parents=True)
    (tmp_path / "course" / "open").mkdir()
    (tmp_path / "link-to-secret").symlink_to(secret)
    (tmp_path / "link-to-course").symlink_to(tmp_path / "course")
    cover = around([secret])
    assert tmp_path / "course" / "open" in cover
    for path in cover:
        real = path.resolve()
        assert real != secret and real not in secret.parents and secret not in real.parents, path


@pytest.mark.skipif(not HAS_LANDLOCK, reason="no Landlock filesystem sandbox on this system")
def test_a_checkout_inside_the_cache_leaves_the_rest_of_the_cache_writable(tmp_path):
    """Writable rules compose with denied trees inside them: the instructor's checkout under ~/.cache stays hidden,
    and the rest of ~/.cache stays writable (datasets' locks live there)."""
    cache = tmp_path / "cache"
    checkout = cache / "courses" / "bert-course"
    (cache / "huggingface" / "datasets").mkdir(parents=True)
    checkout.mkdir(parents=True)
    (checkout / "solution.txt").write_text("the answers")
    policy = tmp_path / "policy.json"
    Policy(deny=[str(checkout)], writable=[str(cache)]).save(policy)
    (cache / "courses" / "other-course").mkdir()
    script = (
        f"echo lock > {cache}/huggingface/datasets/a.lock && mkdir -p {cache}/huggingface/hub/new && "
        f"echo one > {cache}/courses/other-course/file.txt && echo wrote; "
        f"cat {checkout}/solution.txt || echo no-read; echo x > {checkout}/planted || echo no-write"
    )
    run = subprocess.run(launcher(policy, ["/bin/sh", "-c", script]), capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["wrote", "no-read", "no-write"], run.stdout + run.stderr
    assert (cache / "huggingface" / "datasets" / "a.lock").read_text() == "lock\n"
    assert not (checkout / "planted").exists()


PROBE_CELL = """import os
def attempt(what, action):
    try:
        result = action()
    except OSError as err:
        result = type(err).__name__
    print(what, repr(result))
def write(path):
    with open(path, "w") as f:
        f.write("planted")
    return "wrote"
attempt("namespace", lambda: os.readlink("/proc/self/ns/mnt"))
attempt("read-denied-file", lambda: open({grades!r}).read())
attempt("list-denied-folder", lambda: os.listdir({checkout!r}))
attempt("read-in-denied-folder", lambda: open({solution!r}).read())
attempt("read-reopened", lambda: open({notes!r}).read())
attempt("write-reopened", lambda: write({notes!r} + ".new"))
attempt("write-denied-folder", lambda: write({checkout!r} + "/planted"))
attempt("write-outside", lambda: write({outside!r}))
attempt("write-scratch", lambda: write({scratch!r}))
attempt("write-cache", lambda: write({cache!r}))
"""


@NEEDS_BUBBLEWRAP
@pytest.mark.parametrize("with_landlock", [False, True], ids=["bubblewrap-alone", "landlock-inside"])
def test_a_kernel_in_bubblewrap_sees_only_what_the_policy_allows(tmp_path, with_landlock):
    """A real grading kernel, started the way the grader starts it (:func:`.runner.execute`, through bwrap), under a
    policy whose denied checkout lies inside the writable cache: it cannot read the denied file, list or read the
    denied folder, or write anywhere but its scratch folder and the cache; the folder re-opened for reading inside
    the denied one is readable, not writable. Without Landlock inside, bubblewrap alone must hold all of it."""
    if with_landlock and not HAS_LANDLOCK:
        pytest.skip("no Landlock filesystem sandbox on this system")
    cache, scratch = tmp_path / "cache", tmp_path / "scratch"
    checkout = cache / "courses" / "bert-course"
    (checkout / "open").mkdir(parents=True)
    (cache / "huggingface").mkdir()
    (scratch / "work").mkdir(parents=True)
    (checkout / "solution.txt").write_text("the answers")
    (checkout / "open" / "notes.txt").write_text("readable again")
    grades = tmp_path / "grades.csv"
    grades.write_text("ada,4")
    paths = {
        "grades": str(grades),
        "checkout": str(checkout),
        "solution": str(checkout / "solution.txt"),
        "notes": str(checkout / "open" / "notes.txt"),
        "outside": str(tmp_path / "planted"),
        "scratch": str(scratch / "work" / "wrote.txt"),
        "cache": str(cache / "huggingface" / "lock"),
    }
    policy = Policy(
        deny=[str(checkout), str(grades)],
        writable=[str(scratch), str(cache)],
        readable=[str(checkout / "open")],
        landlock=with_landlock,
        bubblewrap=BUBBLEWRAP.program,
    )
    run = execute(
        [Step("lesson", PROBE_CELL.format(**paths))],
        Limits(120, 60, 4000),
        scratch,
        policy,
        {**os.environ, "TMPDIR": str(scratch)},
    )
    assert run.ended is None, f"{run.ended}: {(scratch / 'kernel.log').read_text()[-2000:]}"
    seen = dict(line.split(" ", 1) for line in run.outputs[0].strip().splitlines())
    assert seen["namespace"] != repr(os.readlink("/proc/self/ns/mnt")), "the kernel did not run in bubblewrap"
    assert seen["read-denied-file"] == "'PermissionError'", seen  # /dev/null, bound without device access
    # bubblewrap shows an empty tmpfs (with the mount point of what it re-opens); Landlock refuses to list it
    assert seen["list-denied-folder"] == ("'PermissionError'" if with_landlock else "['open']"), seen
    assert seen["read-in-denied-folder"] == "'FileNotFoundError'", seen  # not there: hidden under the tmpfs
    assert seen["read-reopened"] == "'readable again'", seen
    for what in ("write-reopened", "write-denied-folder", "write-outside"):  # OSError: a read-only file system
        assert seen[what] in ("'OSError'", "'PermissionError'"), (what, seen)
    assert seen["write-scratch"] == seen["write-cache"] == "'wrote'", seen
    assert (cache / "huggingface" / "lock").read_text() == "planted"
    assert not (tmp_path / "planted").exists() and not (checkout / "planted").exists()
    assert not (checkout / "open" / "notes.txt.new").exists()
    assert grades.read_text() == "ada,4" and (checkout / "solution.txt").read_text() == "the answers"


def _imported(command: list[str]) -> set[str]:
    """The top-level modules the Python process of ``command`` imports (``-X importtime``) before it execs
    ``echo launched``; the exec'd shell is another program and prints none."""
    run = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "launched", run.stdout + run.stderr[-2000:]
    lines = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert lines, run.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines[1:]}  # lines[0] is the header


@pytest.mark.slow
def test_the_sandbox_launcher_imports_only_the_standard_library(tmp_path):
    """Each grading kernel starts through the launcher the kernel manager builds: the sandbox file run by its path,
    which imports nothing outside the standard library (not course_utils, not torch) before it execs the kernel.
    The same measurement on ``-m course_tools.grading.sandbox`` sees the package and torch, so it would catch them."""
    policy = tmp_path / "policy.json"
    Policy().save(policy)
    kernel = this_environment_kernel_manager(SandboxedKernelManager, policy_file=str(policy)).format_kernel_cmd()
    command = launcher(policy, ["/bin/sh", "-c", "echo launched"])
    assert kernel[: command.index("--") + 1] == command[: command.index("--") + 1], kernel
    # -X importtime lists attempts too (copy.py tries org.python.core): count the ones that exist
    outside = {n for n in _imported(command) - set(sys.stdlib_module_names) if importlib.util.find_spec(n)}
    assert not outside, f"the launcher imported {sorted(outside)} before exec"
    as_module = _imported(
        [sys.executable, "-m", "course_tools.grading.sandbox", str(policy), "--", "/bin/sh", "-c", "echo launched"]
    )
    assert {"course_utils", "torch"} <= as_module


def test_the_kernel_manager_starts_the_launcher_inside_bwrap_where_the_policy_says(tmp_path):
    """The kernel command is bwrap with the policy's options, ``--``, then the same standard-library launcher as
    without bubblewrap, then the kernel. No bwrap needed: only the command is built."""
    policy = tmp_path / "policy.json"
    Policy(deny=[str(tmp_path)], bubblewrap="/opt/bwrap").save(policy)
    kernel = this_environment_kernel_manager(SandboxedKernelManager, policy_file=str(policy)).format_kernel_cmd()
    split = kernel.index("--")
    assert kernel[: split + 1] == bubblewrap_prefix(Policy.load(policy), "/opt/bwrap")
    assert (
        kernel[:3] == ["/opt/bwrap", "--die-with-parent", "--cap-drop"]
        and ["--tmpfs", str(tmp_path)] == kernel[kernel.index("--tmpfs") : kernel.index("--tmpfs") + 2]
    )
    inner = kernel[split + 1 :]
    assert inner[: inner.index("--") + 1] == launcher(policy, []) and "ipykernel_launcher" in inner[-4:]
    assert sandboxed_command(policy, ["k"]) == [*kernel[: split + 1], *launcher(policy, ["k"])]


def test_the_guard_cell_runs_guard_py_without_the_package():
    """The cell before each answer loads guard.py by its path: importing course_utils there (torch, transformers)
    would spend the exercise's time limit and blame the student for it."""
    code = (
        guard_cell("_grading_x_1", ("f",)) + "\nimport sys\nprint(type(_grading_x_1).__name__, "
        "'course_utils' in sys.modules, 'torch' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.split() == ["Guard", "False", "False"], run.stdout + run.stderr[-2000:]


def test_isolation_is_detected_and_reported(monkeypatch, tmp_path):
    """On this machine: bubblewrap where it works, else Landlock where the kernel offers it, else none (with the
    warning); Landlock is applied inside bubblewrap too; cgroups are probed and reported, not used."""
    monkeypatch.delenv(ISOLATION_VARIABLE, raising=False)
    isolation = detect_isolation()
    expected = "bubblewrap" if BUBBLEWRAP.available else "landlock" if HAS_LANDLOCK else "none"
    assert isolation.filesystem == expected
    first = {
        "bubblewrap": f"bubblewrap ({BUBBLEWRAP.program}: the filesystem read-only",
        "landlock": "Landlock filesystem sandbox (ABI ",
        "none": "no filesystem sandbox",
    }[expected]
    assert isolation.describe().startswith("isolation: " + first), isolation.describe()
    for name in ("bubblewrap", "cgroup memory limit", "memory watch"):
        assert name in isolation.describe()
    if BUBBLEWRAP.available and HAS_LANDLOCK:
        line = isolation.describe()
        assert "Landlock filesystem sandbox (ABI " in line and ", inside bubblewrap)" in line, line
    assert (isolation.warning is None) == (expected != "none")
    assert "no filesystem sandbox" in Isolation("none", "watch", ()).warning
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap, no systemd-run
    without = detect_isolation()
    bubblewrap = next(m for m in without.mechanisms if m.name == "bubblewrap")
    assert not bubblewrap.available and not bubblewrap.used and bubblewrap.detail == "bwrap is not on PATH"
    assert without.filesystem == ("landlock" if HAS_LANDLOCK else "none") and without.bwrap is None


def _probes(monkeypatch, bubblewrap: bool, landlock: bool) -> None:
    """Make the probes find bubblewrap and Landlock, or not."""
    monkeypatch.setattr(
        isolation_module,
        "probe_bubblewrap",
        lambda: (
            Mechanism("bubblewrap", True, "/opt/bwrap", program="/opt/bwrap")
            if bubblewrap
            else Mechanism("bubblewrap", False, "bwrap is not on PATH")
        ),
    )
    monkeypatch.setattr(
        isolation_module,
        "probe_landlock",
        lambda: (
            Mechanism("Landlock filesystem sandbox", True, "ABI 7")
            if landlock
            else Mechanism("Landlock filesystem sandbox", False, "this kernel offers none")
        ),
    )
    monkeypatch.setattr(
        isolation_module, "probe_cgroup_memory", lambda: (Mechanism("cgroup memory limit", False, "not probed"), None)
    )


@pytest.mark.parametrize(
    "bubblewrap, landlock, choice, variable, filesystem",
    [
        (True, True, None, None, "bubblewrap"),
        (True, False, None, None, "bubblewrap"),
        (False, True, None, None, "landlock"),
        (False, False, None, None, "none"),
        (True, True, "landlock", None, "landlock"),
        (True, True, None, "landlock", "landlock"),
        (True, True, "bubblewrap", "landlock", "bubblewrap"),  # the flag wins over the variable
        (True, True, "auto", None, "bubblewrap"),
    ],
)
def test_isolation_prefers_bubblewrap_then_landlock(monkeypatch, bubblewrap, landlock, choice, variable, filesystem):
    _probes(monkeypatch, bubblewrap, landlock)
    if variable:
        monkeypatch.setenv(ISOLATION_VARIABLE, variable)
    else:
        monkeypatch.delenv(ISOLATION_VARIABLE, raising=False)
    isolation = detect_isolation(choice)
    assert isolation.filesystem == filesystem
    policy = isolation.apply(Policy(deny=["/x"]))
    assert policy.bubblewrap == ("/opt/bwrap" if filesystem == "bubblewrap" else None) and policy.deny == ["/x"]
    assert policy.landlock  # the launcher applies Landlock wherever the kernel offers it, inside bubblewrap too
    used = [m.name for m in isolation.mechanisms if m.used]
    assert ("bubblewrap" in used) == (filesystem == "bubblewrap")
    assert ("Landlock filesystem sandbox" in used) == landlock
    assert (isolation.warning is None) == (filesystem != "none")


@pytest.mark.parametrize(
    "bubblewrap, landlock, choice, message",
    [
        (False, True, "bubblewrap", "bubblewrap cannot be used here: bwrap is not on PATH"),
        (True, False, "landlock", "Landlock cannot be used here: this kernel offers none"),
        (True, True, "docker", "'docker' is not one of auto, bubblewrap, landlock"),
    ],
)
def test_an_isolation_asked_for_is_never_replaced_by_another(monkeypatch, bubblewrap, landlock, choice, message):
    _probes(monkeypatch, bubblewrap, landlock)
    with pytest.raises(ValueError, match=re.escape(message)):
        detect_isolation(choice)


def test_the_command_refuses_an_isolation_it_cannot_give(monkeypatch, tmp_path, capsys):
    """``--isolation bubblewrap`` without bwrap: status 2, the reason, and nothing written (not even the feedback
    folder): grading without the sandbox the instructor asked for is not an option."""
    (tmp_path / "subs" / "ada").mkdir(parents=True)
    (tmp_path / "subs" / "ada" / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    monkeypatch.setenv("PATH", str(tmp_path))
    status = grading_main(
        [
            "autograde",
            str(tmp_path / "subs"),
            "--source",
            str(FIXTURE),
            "--out",
            str(tmp_path / "out" / "grades.csv"),
            "--isolation",
            "bubblewrap",
        ]
    )
    assert status == 2
    assert "bubblewrap cannot be used here: bwrap is not on PATH" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_bubblewrap_mounts_follow_the_policy(tmp_path):
    """Shortest path first, so a mount never hides one made for a path beneath it; a denied folder becomes an empty
    tmpfs (read-only once what it re-exposes is bound in it), a denied file /dev/null; a readable path is bound only
    inside a denied tree, a writable one only where it is not writable already; paths that do not exist and those
    under the fresh /dev are left out. No bwrap needed: these are the options the launcher gets."""
    cache, scratch, data = tmp_path / "cache", tmp_path / "scratch", tmp_path / "data"
    checkout = cache / "course"
    for folder in (
        checkout / "course_utils",
        checkout / ".venv" / "lib",
        checkout / "build" / "tmp",
        scratch / "work",
        data,
        cache / "hf",
    ):
        folder.mkdir(parents=True)
    (tmp_path / "grades.csv").write_text("")
    (tmp_path / "link").symlink_to(checkout)
    policy = Policy(
        deny=[str(tmp_path / "link"), str(tmp_path / "grades.csv"), str(tmp_path / "gone"), str(checkout / "build")],
        writable=["/dev", str(cache), str(cache / "hf"), str(scratch), str(checkout / "build" / "tmp")],
        readable=[
            str(checkout / "course_utils"),
            str(checkout / ".venv"),
            str(checkout / ".venv" / "lib"),
            str(data),
            str(cache / "hf"),
        ],
    )
    assert mount_options(policy) == [
        "--bind",
        str(cache),
        str(cache),
        "--ro-bind",
        "/dev/null",
        str(tmp_path / "grades.csv"),
        "--bind",
        str(scratch),
        str(scratch),
        "--tmpfs",
        str(checkout),
        "--ro-bind",
        str(checkout / ".venv"),
        str(checkout / ".venv"),
        "--ro-bind",
        str(checkout / "course_utils"),
        str(checkout / "course_utils"),
        "--bind",
        str(checkout / "build" / "tmp"),
        str(checkout / "build" / "tmp"),
        "--remount-ro",
        str(checkout),
    ]


def _cgroup_files(tmp_path, v2_controllers: str | None, v1: bool, mount_root: str = "/") -> tuple[Path, Path, Path]:
    """A fake /proc/self/mountinfo and /proc/self/cgroup, and the cgroup folders they name: this process sits in
    /grading of each hierarchy (of a mount whose root is ``mount_root``, as in a container)."""
    lines, groups = ["22 1 0:21 / /proc rw - proc proc rw"], ["1:name=systemd:/"]
    v2_own = tmp_path / "unified" / "grading"
    if v2_controllers is not None:
        v2_own.mkdir(parents=True)
        (v2_own / "cgroup.controllers").write_text(v2_controllers + "\n")
        (v2_own / "cgroup.subtree_control").write_text("\n")
        lines.append(f"31 23 0:28 {mount_root} {tmp_path / 'unified'} rw - cgroup2 cgroup2 rw")
        groups.append(f"0::{mount_root.rstrip('/')}/grading")
    v1_own = tmp_path / "memory" / "grading"
    if v1:
        v1_own.mkdir(parents=True)
        (v1_own / "memory.limit_in_bytes").write_text("9223372036854771712\n")
        lines.append(f"35 31 0:30 {mount_root} {tmp_path / 'memory'} rw - cgroup cgroup rw,memory")
        groups.append(f"4:memory:{mount_root.rstrip('/')}/grading")
    (tmp_path / "mountinfo").write_text("\n".join(lines) + "\n")
    (tmp_path / "membership").write_text("\n".join(groups) + "\n")
    return (
        tmp_path / "mountinfo",
        tmp_path / "membership",
        v2_own if v2_controllers and "memory" in v2_controllers else v1_own,
    )


@pytest.mark.parametrize(
    "v2_controllers, v1, mount_root, version, found",
    [
        ("cpu memory pids", True, "/", 2, "cgroup v2 group"),  # v2 first; its children get the controller
        ("cpu pids", True, "/", 1, "cgroup v1 memory group"),  # v2 without memory: v1's memory hierarchy
        ("cpu memory", False, "/docker/abc", 2, "cgroup v2 group"),  # a container's view: the mount's root stripped
        ("hugetlb", False, "/", None, "offers hugetlb, not memory"),
        (None, False, "/", None, "no cgroup hierarchy with the memory controller"),
    ],
)
def test_the_memory_cgroup_hierarchy_is_found_from_mountinfo(tmp_path, v2_controllers, v1, mount_root, version, found):
    """Where the grader may make memory-limited cgroups, read from mountinfo and this process's memberships."""
    mountinfo, membership, own = _cgroup_files(tmp_path, v2_controllers, v1, mount_root)
    hierarchy, what = find_hierarchy(mountinfo, membership)
    assert found in what, what
    assert hierarchy == (MemoryHierarchy(version, own) if version else None)
    if version == 2:
        assert (own / "cgroup.subtree_control").read_text() == "+memory", "children get the memory controller"


def test_a_memory_cgroup_refuses_a_limit_that_is_not_a_size(tmp_path):
    with pytest.raises(ValueError, match="limit_mb must be a positive number of megabytes; got 0"):
        MemoryCgroup(MemoryHierarchy(2, tmp_path), 0)
    assert list(tmp_path.iterdir()) == []


REAL_CGROUPS, CGROUPS_FOUND = find_hierarchy()


@pytest.mark.slow
@pytest.mark.skipif(REAL_CGROUPS is None, reason=f"no memory cgroup can be made here: {CGROUPS_FOUND}")
def test_a_real_memory_cgroup_kills_what_outgrows_it():
    """The prefix moves a command into the group; the Linux kernel kills it once it touches more than the limit
    (256 MB touched in one go under 64 MB: no watch could be that quick), and the group says so; a command within
    the limit runs to the end. Closing kills what is left and removes the group."""
    grow = "b = bytearray(256 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('survived')"
    with MemoryCgroup(REAL_CGROUPS, 64) as group:
        small = subprocess.run(
            [*join_prefix(group.procs), sys.executable, "-c", "print(open('/proc/self/cgroup').read())"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert small.returncode == 0 and group.folder.name in small.stdout and not group.oom_killed()
        big = subprocess.run(
            [*join_prefix(group.procs), sys.executable, "-c", grow], capture_output=True, text=True, timeout=60
        )
        assert big.returncode == -9 and "survived" not in big.stdout and group.oom_killed()
    assert not group.folder.exists()


# ---------------------------------------------------------------------------------------------- the hostile batch
def _student(release_nb, answers: dict[str, str], edit=None) -> bytes:
    nb = nbformat.from_dict(json.loads(json.dumps(release_nb)))
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    if edit:
        edit(nb)
    return nbformat.writes(nb).encode()


def _with(**changed: str) -> dict[str, str]:
    return {**REFERENCE, **changed}


def _drop(grade_id):
    def edit(nb):
        nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]

    return edit


def _shuffle(nb):
    nb.cells = list(reversed(nb.cells))


def _break_first_cell(nb):
    nb.cells[1].source = "raise RuntimeError('I broke the first cell')"


def _weaken_checks(nb):
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.source = "pass  # always passes"


def _strip_metadata(nb):
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)


def _grade_batch(root: Path, isolation: str, only: set[str] | None = None) -> dict:
    """Release the fixture into ``root``, build one submission per behaviour (those named in ``only``, else all),
    and autograde them all with the command line under ``--isolation isolation``."""
    source = root / "course" / "notebooks"
    source.mkdir(parents=True)
    (source / FIXTURE.name).write_bytes(FIXTURE.read_bytes())
    subprocess.run(["git", "init", "-q", str(root / "course")], check=True)
    release(source, root / "release")
    released = nbformat.read(root / "release" / FIXTURE.name, 4)
    out = root / "out" / "grades.csv"
    subs = root / "submissions"
    secret = source / FIXTURE.name
    reads_source = (
        f"def double(x):\n    try:\n        open({str(secret)!r}).read()\n    except OSError:\n"
        f"        return -1\n    return helper(x)"
    )
    victim = subs / "alice" / FIXTURE.name
    writes = (
        f"for target in [{str(out)!r}, {str(victim)!r}]:\n    try:\n        open(target, 'w').write('hacked')\n"
        f"    except OSError:\n        pass\n" + REFERENCE["vowels"]
    )
    students = {
        "alice": _student(released, {**REFERENCE, "why_no_y": "The exercise counts only a, e, i, o and u."}),
        "untouched": nbformat.writes(released).encode(),
        "endless_loop": _student(released, _with(double=REFERENCE["double"] + "\nwhile True:\n    pass")),
        "memory_hog": _student(released, _with(area="hog = []\nwhile True:\n    hog.append(bytearray(2**26))")),
        "huge_alloc": _student(released, _with(area="x = bytearray(2**45)\n" + REFERENCE["area"])),
        "sys_exit": _student(released, _with(vowels=REFERENCE["vowels"] + "\nimport sys\nsys.exit(1)")),
        "os_exit": _student(released, _with(double="import os\nos._exit(0)")),
        "first_cell_error": _student(released, REFERENCE, _break_first_cell),
        "weakened_checks": _student(released, _with(double="def double(x):\n    return 0"), _weaken_checks),
        "patches_helpers": _student(
            released,
            _with(
                area="def area(r):\n    return 0\nmath.isclose = lambda *a, **k: True",
                double="def helper(x):\n    return 0\n\ndef double(x):\n    return 2 * x",
            ),
        ),
        "patches_at_call_time": _student(
            released,
            _with(area="def area(r):\n    math.isclose = lambda *a, **k: True\n    return math.pi if r == 1 else 0"),
        ),
        "reads_source": _student(released, _with(double=reads_source)),
        "writes_files": _student(released, _with(vowels=writes)),
        "corrupt": b"{this is not a notebook",
        "deleted_cell": _student(released, REFERENCE, _drop("area")),
        "reordered": _student(released, REFERENCE, _shuffle),
        "no_metadata": _student(released, REFERENCE, _strip_metadata),
    }
    for name, data in students.items():
        if only is None or name in only:
            (subs / name).mkdir(parents=True)
            (subs / name / FIXTURE.name).write_bytes(data)
    before = victim.read_bytes()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.grading",
            "autograde",
            str(subs),
            "--source",
            str(source),
            "--out",
            str(out),
            "--cell-time-limit",
            "8",
            "--time-limit",
            "60",
            "--memory-mb",
            "1500",
            "--isolation",
            isolation,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with out.open() as f:
        grades = {row["student"]: row for row in csv.DictReader(f)}
    feedback = {p.stem: p.read_text() for p in (out.parent / "feedback").glob("*.md")}
    line = next((x for x in result.stdout.splitlines() if x.startswith("isolation: ")), "")
    return {
        "grades": grades,
        "feedback": feedback,
        "victim_before": before,
        "victim": victim,
        "out": out,
        "stdout": result.stdout,
        "sandboxed": bool(line) and not line.startswith("isolation: no filesystem"),
    }


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Every behaviour, graded under Landlock alone where the kernel offers it (else whatever this machine gives)."""
    return _grade_batch(tmp_path_factory.mktemp("grading"), "landlock" if HAS_LANDLOCK else "auto")


BUBBLEWRAP_STUDENTS = ("alice", "reads_source", "writes_files", "memory_hog", "os_exit")


@pytest.fixture(scope="module")
def bubblewrap_batch(tmp_path_factory):
    """The submissions that test the sandbox and the kernel's death, graded under bubblewrap (and Landlock inside it,
    where the kernel offers it)."""
    if not BUBBLEWRAP.available:
        pytest.skip(f"bubblewrap unusable here: {BUBBLEWRAP.detail}")
    return _grade_batch(tmp_path_factory.mktemp("grading-bubblewrap"), "bubblewrap", set(BUBBLEWRAP_STUDENTS))


def _points(batch, student) -> dict[str, float]:
    row = batch["grades"][student]
    # the exercises' columns; the written answer's (01_tiny:why_no_y) is empty until hand grades are merged
    return {k.split(":")[1]: float(v) for k, v in row.items() if k.startswith("01_tiny:") and k.split(":")[1] in FULL}


EXPECTED = {  # student: (points per exercise, words their feedback must contain)
    "alice": (FULL, []),
    "untouched": ({"double": 0, "area": 0, "vowels": 0}, ["not answered"]),
    "endless_loop": ({**FULL, "double": 0}, ["time limit", "graded again without it"]),
    "memory_hog": ({**FULL, "area": 0}, ["memory limit"]),
    "huge_alloc": ({**FULL, "area": 0}, ["MemoryError"]),
    "sys_exit": ({**FULL, "vowels": 0}, ["SystemExit"]),
    "os_exit": ({**FULL, "double": 0}, ["ended the Python process"]),
    "first_cell_error": (FULL, []),
    "weakened_checks": ({**FULL, "double": 0}, ["double(2) should be 4"]),
    "patches_helpers": ({**FULL, "area": 0}, ["put the original back", "math.isclose"]),
    "patches_at_call_time": ({**FULL, "area": 0}, ["math.isclose", "rely on"]),
    "reads_source": ({**FULL, "double": 0}, ["should be 4"]),
    "writes_files": (FULL, []),
    "corrupt": ({"double": 0, "area": 0, "vowels": 0}, ["not a readable notebook"]),
    "deleted_cell": ({**FULL, "area": 0}, ["missing"]),
    "reordered": (FULL, []),
    "no_metadata": (FULL, []),
}


def _check_grade(batch, student) -> None:
    if student in ("reads_source", "writes_files") and not batch["sandboxed"]:
        pytest.skip("no filesystem sandbox on this system")
    points, words = EXPECTED[student]
    assert _points(batch, student) == {k: float(v) for k, v in points.items()}, batch["feedback"][student]
    assert float(batch["grades"][student]["total"]) == sum(points.values())
    for word in words:
        assert word in batch["feedback"][student], batch["feedback"][student]


@pytest.mark.slow
@pytest.mark.parametrize("student", list(EXPECTED))
def test_each_submission_gets_what_it_earned(batch, student):
    _check_grade(batch, student)


@pytest.mark.slow
@pytest.mark.parametrize("student", BUBBLEWRAP_STUDENTS)
def test_each_submission_gets_what_it_earned_under_bubblewrap(bubblewrap_batch, student):
    _check_grade(bubblewrap_batch, student)


FRAGILE_CELL = len(nbformat.read(FIXTURE, 4).cells)  # the index of the cell fragile_lesson appends


@pytest.fixture
def fragile_lesson(tmp_path):
    """The tiny lesson with one more lesson cell, which fails where the environment lacks what it needs
    (``$COURSE_TINY_DATA=missing`` stands for a dataset the grading sandbox cannot reach), and one student."""
    nb = nbformat.read(FIXTURE, 4)
    nb.cells.append(
        nbformat.v4.new_code_cell(
            'import os\nassert os.environ.get("COURSE_TINY_DATA") != "missing", "the lesson\'s data is missing"'
        )
    )
    source = tmp_path / "course" / "notebooks"
    source.mkdir(parents=True)
    nbformat.write(nb, source / FIXTURE.name)
    release(source, tmp_path / "release")
    (tmp_path / "subs" / "ada").mkdir(parents=True)
    (tmp_path / "subs" / "ada" / FIXTURE.name).write_bytes(
        _student(nbformat.read(tmp_path / "release" / FIXTURE.name, 4), REFERENCE)
    )

    def autograde(*extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "course_tools.grading",
                "autograde",
                str(tmp_path / "subs"),
                "--source",
                str(source),
                "--out",
                str(tmp_path / "out" / "grades.csv"),
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **(env or {})},
        )

    return tmp_path, autograde


def test_calibration_times_the_solution_generously_and_sets_each_limit_from_what_it_took():
    """Issue 57: on a slow or busy machine the instructor should not have to guess limits."""
    limits = Limits()
    quick = limits.for_notebook("01_masking")
    generous = limits.for_calibration("01_masking")
    assert generous.notebook_seconds >= 10 * quick.notebook_seconds / 2 and generous.cell_seconds > 60
    assert (
        limits.calibrated("01_masking", 100, 5).notebook_seconds,
        limits.calibrated("01_masking", 100, 5).cell_seconds,
    ) == (360, 60)
    assert limits.calibrated("01_masking", 400, 40).cell_seconds == 150  # a slow machine: 3 x 40 + 30
    flags = Limits(500, 20, 2048)
    assert flags.calibrated("01_masking", 400, 40) == Limits(500, 20, 2048)
    assert flags.for_calibration("01_masking") == Limits(500, 20, 2048)


@pytest.mark.slow
def test_calibration_passes_and_sets_the_time_limit(fragile_lesson):
    root, autograde = fragile_lesson
    run = autograde()
    assert run.returncode == 0, run.stderr[-2000:]
    assert re.search(
        r"calibration: 01_tiny: the solution earns every point in \d+ s \(slowest exercise cell [\d.]+ s\); "
        r"limits per submission: \d+ s, \d+ s per exercise cell \(3x \+ a margin\)",
        run.stdout,
    ), run.stdout
    assert "ada: 4 / 4" in run.stdout and "NEEDS A LOOK" not in run.stdout


@pytest.mark.slow
def test_a_broken_environment_is_refused_before_anyone_is_graded(fragile_lesson):
    root, autograde = fragile_lesson
    run = autograde(env={"COURSE_TINY_DATA": "missing"})
    assert run.returncode == 2
    for expected in (
        "calibration failed",
        "no student was graded",
        "01_tiny: the solution earns 4 / 4",
        f"cell {FRAGILE_CELL} raised the lesson's data is missing",
        "--skip-calibration",
    ):
        assert expected in run.stderr, run.stderr
    assert not (root / "out" / "grades.csv").exists() and not (root / "out" / "feedback").exists()


@pytest.mark.slow
def test_a_failing_lesson_cell_marks_the_grade_for_a_look(fragile_lesson):
    root, autograde = fragile_lesson
    run = autograde("--skip-calibration", env={"COURSE_TINY_DATA": "missing"})
    assert run.returncode == 0, run.stderr[-2000:]
    assert "ada: 4 / 4  NEEDS A LOOK: a lesson cell failed in 01_tiny" in run.stdout
    with (root / "out" / "grades.csv").open() as f:
        row = next(csv.DictReader(f))
    assert row["needs_look"] == f"01_tiny: lesson cell {FRAGILE_CELL} raised the lesson's data is missing"
    feedback = (root / "out" / "feedback" / "ada.md").read_text()
    assert feedback.index("**A cell of the lesson itself failed**") < feedback.index("## 01_tiny")


@pytest.mark.slow
def test_the_command_says_which_isolation_it_used(batch):
    line = next((x for x in batch["stdout"].splitlines() if x.startswith("isolation: ")), None)
    assert line is not None, batch["stdout"]
    expected = (
        "Landlock filesystem sandbox (ABI "
        if HAS_LANDLOCK
        else "bubblewrap ("
        if BUBBLEWRAP.available
        else "no filesystem sandbox"
    )
    assert line.startswith("isolation: " + expected), line
    if HAS_LANDLOCK and BUBBLEWRAP.available:
        assert "Not used: bubblewrap (" in line and "isolation landlock was asked for" in line, line


@pytest.mark.slow
def test_the_command_says_it_used_bubblewrap(bubblewrap_batch):
    line = next((x for x in bubblewrap_batch["stdout"].splitlines() if x.startswith("isolation: ")), "")
    assert line.startswith(f"isolation: bubblewrap ({BUBBLEWRAP.program}: "), bubblewrap_batch["stdout"]
    assert ("Landlock filesystem sandbox (ABI " in line and ", inside bubblewrap)" in line) == HAS_LANDLOCK, line


@pytest.mark.slow
def test_hidden_tests_never_reach_the_feedback(batch):
    for text in batch["feedback"].values():
        assert "double(-3)" not in text and "area(2)" not in text


@pytest.mark.slow
@pytest.mark.parametrize("which", ["batch", "bubblewrap_batch"])
def test_a_submission_cannot_write_outside_its_scratch_folder(request, which):
    graded = request.getfixturevalue(which)
    if not graded["sandboxed"]:
        pytest.skip("no filesystem sandbox on this system")
    assert graded["victim"].read_bytes() == graded["victim_before"]
    assert "hacked" not in graded["out"].read_text()


@pytest.mark.slow
def test_cli_reports_bad_input(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.grading",
            "autograde",
            str(tmp_path / "nowhere"),
            "--source",
            str(FIXTURE.parent),
            "--out",
            str(tmp_path / "g.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "is not a folder" in run.stderr
    assert not (tmp_path / "g.csv").exists()


# ------------------------------------------------------------------------------------------- a real course notebook
@pytest.mark.slow
def test_round_trip_on_a_course_notebook(tmp_path):
    """Release lesson 01; the reference answers earn every point, the untouched release none, and the untouched
    release still runs every lesson cell without an error (nothing in the lesson depends on a student's answer).
    The instructor's checkout sits inside the cache folder, which must stay writable around it (issue 23).
    The reference answers are graded once, by the calibration (the same grading of the solution notebook, in the same
    sandbox, that refuses to grade anyone unless it earns every point): handing them in again as a student would run
    the lesson a third time for the same verdict."""
    cache = tmp_path / "cache"
    checkout = cache / "bert-course"
    (checkout / "notebooks").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    source = checkout / "notebooks" / "01_masking.ipynb"
    source.write_bytes((Path(__file__).parent.parent / "notebooks" / "01_masking.ipynb").read_bytes())
    release(source, tmp_path / "release")
    (tmp_path / "subs" / "untouched").mkdir(parents=True)
    (tmp_path / "subs" / "untouched" / source.name).write_bytes((tmp_path / "release" / source.name).read_bytes())
    out = tmp_path / "grades.csv"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("HF_HOME", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_tools.grading",
            "autograde",
            str(tmp_path / "subs"),
            "--source",
            str(source),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "calibration: 01_masking: the solution earns every point" in result.stdout
    with out.open() as f:
        grades = {row["student"]: row for row in csv.DictReader(f)}
    possible = sum(e.points for e in find_exercises(nbformat.read(source, 4), source.stem))
    feedback = {s: (tmp_path / "feedback" / f"{s}.md").read_text() for s in grades}
    assert possible > 0 and set(grades) == {"untouched"}
    assert float(grades["untouched"]["total"]) == 0, feedback["untouched"]
    for text in feedback.values():
        assert "the lesson's cell" not in text, text


@pytest.mark.slow
def test_nbgrader_accepts_the_course_notebooks(tmp_path):
    """``nbgrader generate_assignment`` reads every course notebook, and its student versions match ours cell by cell
    (nbgrader adds a ``# YOUR CODE HERE`` line above the stub)."""
    pytest.importorskip("nbgrader")
    course = tmp_path / "nbgrader-course"
    (course / "source" / "lessons").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "bert-course"\n')
    for path in NOTEBOOKS:
        (course / "source" / "lessons" / path.name).write_bytes(path.read_bytes())
    bin_dir = str(Path(sys.executable).parent)
    env = {**__import__("os").environ, "PATH": bin_dir + ":" + __import__("os").environ.get("PATH", "")}
    run = subprocess.run(
        [str(Path(bin_dir) / "nbgrader"), "generate_assignment", "lessons", "--force"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for path in NOTEBOOKS:
        theirs = nbformat.read(course / "release" / "lessons" / path.name, 4)
        ours = release_notebook(nbformat.read(path, 4), path.stem)
        strip = lambda text: "\n".join(x for x in text.splitlines() if x.strip() != "# YOUR CODE HERE").strip()
        assert [strip(c.source) for c in theirs.cells if c.cell_type == "code"] == [
            strip(c.source) for c in ours.cells if c.cell_type == "code"
        ], path.name


@pytest.mark.slow
def test_the_batch_writes_a_class_report_and_gradescope_results(batch):
    """Issue 40: the class report (terminal and page) and Gradescope's results.json per submission, from the batch."""
    folder = batch["out"].parent
    page = (folder / "class-report.html").read_text()
    assert "01_tiny:double" in page and "Needs a look" in page and "endless_loop · 01_tiny: time limit" in page
    alice = json.loads((folder / "gradescope" / "alice.json").read_text())
    assert alice["score"] == sum(FULL.values()) and {t["status"] for t in alice["tests"]} == {"passed"}
    loop = json.loads((folder / "gradescope" / "endless_loop.json").read_text())
    double = next(t for t in loop["tests"] if t["name"] == "01_tiny:double")
    assert (double["score"], double["status"]) == (0, "failed") and "time limit" in double["output"]
    students = len(batch["grades"])
    assert f"graded {students - 1}, not submitted 0, unreadable 1" in batch["stdout"]  # "corrupt" is unreadable


@pytest.mark.slow
def test_written_answers_are_listed_for_grading_by_hand_and_not_scored(batch):
    """A written answer (nbgrader's manually graded Markdown cell) earns nothing automatically: the batch lists each
    student's text beside the rubric, with a points column to fill (0 already where it was left blank)."""
    folder = batch["out"].parent
    with (folder / "hand-grading.csv").open() as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(batch["grades"])
    assert (rows["alice"]["answer"], rows["alice"]["max_points"], rows["alice"]["points"]) == (
        "01_tiny:why_no_y",
        "1",
        "",
    )
    assert rows["alice"]["text"] == "The exercise counts only a, e, i, o and u."
    assert (rows["untouched"]["text"], rows["untouched"]["points"]) == ("", "0")  # still "YOUR ANSWER HERE"
    assert (rows["corrupt"]["text"], rows["corrupt"]["points"]) == ("", "0")
    assert rows["no_metadata"]["points"] == "0"  # a cell without its grade_id cannot be told from the question
    page = (folder / "hand-grading.md").read_text()
    assert "Why is `y` not a vowel" in page and "Rubric: 1 point" in page and "> The exercise counts only" in page
    assert "why_no_y (up to 1 points): answered" in batch["feedback"]["alice"]
    assert "why_no_y (up to 1 points): left blank" in batch["feedback"]["untouched"]
    assert float(batch["grades"]["alice"]["total"]) == sum(FULL.values())  # not in the automatic total
    assert "To grade by hand" in (folder / "class-report.html").read_text()
    assert "01_tiny:why_no_y" in batch["stdout"] and "hand-grading.csv" in batch["stdout"]
    alice = json.loads((folder / "gradescope" / "alice.json").read_text())
    assert "graded by hand" in alice["output"] and all(t["name"] != "01_tiny:why_no_y" for t in alice["tests"])


def test_a_written_answer_is_released_as_the_stub_and_found_with_its_rubric():
    nb = nbformat.read(FIXTURE, 4)
    (written,) = find_written_answers(nb, "01_tiny")
    assert (written.name, written.points, written.column) == ("why_no_y", 1.0, "01_tiny:why_no_y")
    assert written.question.startswith("**Explain") and written.rubric.startswith("Rubric:")
    assert [e.name for e in find_exercises(nb, "01_tiny")] == ["double", "area", "vowels"]
    student = release_notebook(nb, "01_tiny")
    assert student.cells[written.index].source == TEXT_STUB
    assert "Rubric" not in nbformat.writes(student)
    student.cells[written.index].source = "  Only a e i o u count.\n"
    assert student_writing(student, [written]) == {"why_no_y": "Only a e i o u count."}
    assert student_writing(release_notebook(nb, "01_tiny"), [written]) == {"why_no_y": ""}


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda nb: nb.cells[13].metadata.nbgrader.update(grade=False), "needs both"),
        (lambda nb: nb.cells[13].metadata.nbgrader.pop("points"), "points"),
        (lambda nb: nb.cells.insert(8, nb.cells.pop(13)), "between exercise 'area' and its check"),
        (lambda nb: nb.cells[13].metadata.nbgrader.update(grade_id="area"), "used twice"),
    ],
)
def test_a_malformed_written_answer_is_refused(edit, message):
    nb = nbformat.read(FIXTURE, 4)
    edit(nb)
    with pytest.raises(ExerciseError, match=message):
        find_exercises(nb, "01_tiny")


def test_a_failed_hidden_test_says_which_property_and_nothing_of_its_code():
    """Issue 40: the student learns what property failed (the message written with the test), not the test."""
    from course_tools.grading.scoring import hidden_reason

    said = hidden_reason({"ename": "AssertionError", "evalue": "max_pool should work when every value is negative"})
    assert (
        said == "passes the visible check but not the hidden tests: max_pool should work when every value is negative"
    )
    assert hidden_reason({"ename": "AssertionError", "evalue": ""}).endswith("hidden tests (AssertionError)")
    assert hidden_reason({"ename": "KeyError", "evalue": "'secret'"}).endswith("hidden tests (KeyError)")


def test_a_rubric_can_live_in_the_appendix_section_its_cell_links_to(tmp_path):
    (tmp_path / "appendix").mkdir()
    (tmp_path / "appendix" / "01.md").write_text(
        "# Appendix\n\n## Rubric: `why`\n\n- 1 point: the reason.\n\n### A detail\n\nkept\n\n## Next\n\nnot kept\n"
    )
    cell = "Rubric (1 point): [instructor appendix](appendix/01.md#rubric-why)."
    assert heading_anchor("Rubric: `why`") == "rubric-why" and heading_anchor("Step 2 (of 3)") == "step-2-of-3"
    assert rubric_of(cell, tmp_path) == "- 1 point: the reason.\n\n### A detail\n\nkept"
    assert rubric_of("- 1 point: inline.", tmp_path) == "- 1 point: inline."
    assert rubric_of(cell, None) == cell
    assert "not beside the notebook" in rubric_of(cell, tmp_path / "elsewhere")
    with pytest.raises(
        ExerciseError, match="no heading with the anchor #rubric-who; its anchors: #appendix, #rubric-why"
    ):
        rubric_of(cell.replace("#rubric-why", "#rubric-who"), tmp_path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_written_answer_in_the_course_has_a_rubric_in_the_instructor_only_rubrics(path):
    """The rubrics live in notebooks/rubrics/ (never released, not on the students' site; issue 54), not in the
    public appendices."""
    nb = nbformat.read(path, 4)
    for written in find_written_answers(nb, path.stem, path.parent):
        cell = nb.cells[written.index].source
        assert f"](rubrics/{path.stem}.md#" in cell and len(cell.split()) <= 12, f"{written.name}: the cell should link"
        assert "## Rubric" not in (path.parent / "appendix" / f"{path.stem}.md").read_text()
        assert "1 point" in written.rubric and "not beside" not in written.rubric, written.rubric


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem
)
def test_every_hidden_assertion_in_the_course_states_its_property(path):
    """Each hidden assertion carries a plain-text message (no f-string, no values): what the feedback shows."""
    bare = []
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        source = "".join(cell["source"])
        if "### BEGIN HIDDEN TESTS" not in source:
            continue
        hidden = split_hidden(source)[1]
        for node in ast.walk(ast.parse(without_magics(hidden))):
            if isinstance(node, ast.Assert) and not (
                isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str) and node.msg.value.strip()
            ):
                bare.append(f"cell {index}: {ast.unparse(node.test)[:80]}")
    assert bare == []


PREDICTION = re.compile(r"(my|predicted)_\w+")


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem
)
def test_no_prediction_has_a_default_that_its_check_accepts(path):
    """A prediction a student receives (``my_prediction = None`` outside the solution) is refused by its check until
    the student writes one: the check's first use of the name is a guard that fails on the released value."""
    cells = json.loads(path.read_text())["cells"]
    found = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or "### BEGIN SOLUTION" not in source:
            continue
        try:  # what precedes the solution: a prediction's line, or the opening of a statement the student ends
            given = ast.parse(without_magics(source.split("### BEGIN SOLUTION")[0])).body
        except SyntaxError:
            continue
        for node in given:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            name = node.targets[0].id
            if not PREDICTION.fullmatch(name):
                continue
            found.append(name)
            released = ast.literal_eval(node.value)
            assert released is None, f"cell {index}: {name} is released as {released!r}; release it as None"
            solution = source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
            assert re.search(rf"^\s*{name} = ", solution, re.M), f"cell {index}: the solution never sets {name}"
            check = next(c for c in cells[index + 1 :] if c["cell_type"] == "code")
            statements = ast.parse(without_magics(split_hidden("".join(check["source"]))[0])).body
            first_use = next(s for s in statements if any(getattr(n, "id", None) == name for n in ast.walk(s)))
            with pytest.raises(AssertionError, match="still None"):
                exec(compile(ast.Module([first_use], []), "check", "exec"), {name: released})
    if path.stem[:2] in {"01", "02", "03", "04", "06", "07", "08"}:
        assert found, f"{path.name}: its predict-then-measure exercise was not found"
