"""The Gradescope autograder: the zip's layout, and ``run_autograder`` grading a submission in a folder laid out as
Gradescope lays it out (``source/`` holding the unpacked zip, ``submission/``, ``results/``), with the tiny fixture
lesson (``double`` 1 point, ``area`` 2, ``vowels`` 1, and one written answer graded by hand).

The zip is built without the course's wheels (``--no-wheels``) and ``run_autograder`` is pointed at this environment's
Python (``$COURSE_AUTOGRADER_PYTHON``): what setup.sh would install is what is installed here. The slow test builds
the wheels too.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from course_tools.grading import release
from course_tools.grading.__main__ import main as grading_main
from course_tools.grading.gradescope import run_autograder

FIXTURE = Path(__file__).parent / "fixtures" / "grading" / "01_tiny.ipynb"
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
SOLUTIONS = {  # the reference answers, by grade_id
    c.metadata["nbgrader"]["grade_id"]: c.source
    for c in nbformat.read(FIXTURE, 4).cells
    if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
}


def _check_schema(results: dict) -> None:
    """Gradescope's results.json: a numeric score, an output text, and tests each with a name, score, max_score,
    output and visibility (https://gradescope-autograders.readthedocs.io/en/latest/specs/)."""
    assert isinstance(results["score"], (int, float)) and isinstance(results["output"], str)
    assert isinstance(results["execution_time"], int)
    for test in results["tests"]:
        assert isinstance(test["name"], str) and isinstance(test["output"], str), test
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float)), test
        assert test["visibility"] in VISIBILITY and 0 <= test["score"] <= test["max_score"], test
        assert test.get("status", "passed") in {"passed", "failed"}, test
    assert results["score"] == sum(t["score"] for t in results["tests"])
    json.dumps(results)


def _unpack(archive: Path, root: Path) -> Path:
    """Lay the zip out as Gradescope does: unpacked in <root>/source, run_autograder copied to <root>."""
    with zipfile.ZipFile(archive) as z:
        z.extractall(root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    return root


@pytest.fixture(scope="module")
def autograder(tmp_path_factory) -> Path:
    """The tiny lesson's autograder, unpacked and calibrated (setup.sh's last step) in a temporary root."""
    tmp = tmp_path_factory.mktemp("gradescope")
    archive = tmp / "autograder-01_tiny.zip"
    assert grading_main(["gradescope-zip", str(FIXTURE), "--out", str(archive), "--no-wheels"]) == 0
    root = _unpack(archive, tmp / "autograder")
    calibrated = subprocess.run(
        [sys.executable, "-m", "course_tools.grading.gradescope", "calibrate", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert calibrated.returncode == 0, calibrated.stdout[-2000:] + calibrated.stderr[-2000:]
    assert "calibration: 01_tiny: the solution earns every point" in calibrated.stdout
    return root


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> nbformat.NotebookNode:
    """The student version of the tiny lesson, as the release makes it."""
    tmp = tmp_path_factory.mktemp("release")
    (tmp / "source").mkdir()
    shutil.copy2(FIXTURE, tmp / "source" / FIXTURE.name)
    release(tmp / "source", tmp / "release")
    return nbformat.read(tmp / "release" / FIXTURE.name, 4)


def _submit(root: Path, files: dict[str, bytes]) -> tuple[dict, subprocess.CompletedProcess]:
    """Hand in ``files`` (name -> bytes) and run ``run_autograder`` as Gradescope would; its results.json."""
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
        (root / folder).mkdir()
    for name, data in files.items():
        (root / "submission" / name).write_bytes(data)
    run = subprocess.run(
        ["bash", str(root / "run_autograder"), str(root)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COURSE_AUTOGRADER_PYTHON": sys.executable},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    _check_schema(results)
    return results, run


def _tests(results: dict) -> dict[str, dict]:
    return {t["name"]: t for t in results["tests"]}


def _answered(nb: nbformat.NotebookNode, answers: dict[str, str]) -> bytes:
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    return nbformat.writes(nb).encode()


def test_the_zip_holds_what_gradescope_runs(tmp_path):
    archive = tmp_path / "a.zip"
    assert (
        grading_main(["gradescope-zip", str(FIXTURE), "--out", str(archive), "--no-wheels", "--memory-mb", "900"]) == 0
    )
    with zipfile.ZipFile(archive) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder", "autograder.json", "solution/01_tiny.ipynb", "constraints.txt"} <= names
        for script in ("setup.sh", "run_autograder"):  # at the zip's root, executable
            assert stat.S_IMODE(z.getinfo(script).external_attr >> 16) & 0o111, script
        config = json.loads(z.read("autograder.json"))
        solution = nbformat.reads(z.read("solution/01_tiny.ipynb").decode(), 4)
        scripts = [z.read(s).decode() for s in ("setup.sh", "run_autograder")]
        pins = z.read("constraints.txt").decode().split()
    assert config == {
        "notebook": "01_tiny",
        "limits": {"notebook_seconds": None, "cell_seconds": None, "memory_mb": 900},  # None: from calibration
        "isolation": None,
    }
    assert not any(c.get("outputs") for c in solution.cells if c.cell_type == "code")
    assert "course_tools.grading.gradescope calibrate" in scripts[0] and "download.pytorch.org/whl/cpu" in scripts[0]
    assert not any(p.startswith(("torch==", "course-utils==", "course-tools==")) for p in pins)
    assert any(p.startswith("nbformat==") for p in pins)
    for script in scripts:  # bash can parse them
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_a_notebook_without_exercises_is_refused(tmp_path, capsys):
    plain = tmp_path / "plain.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), plain)
    assert grading_main(["gradescope-zip", str(plain), "--out", str(tmp_path / "a.zip")]) == 2
    assert "has no exercises" in capsys.readouterr().err and not (tmp_path / "a.zip").exists()


def test_an_autograder_that_is_not_set_up_still_writes_results(tmp_path):
    results = run_autograder(tmp_path)
    assert results["score"] == 0 and "Tell your instructor" in results["output"]
    assert json.loads((tmp_path / "results" / "results.json").read_text())["score"] == 0


@pytest.mark.slow
def test_the_solution_earns_every_point(autograder):
    results, run = _submit(autograder, {FIXTURE.name: FIXTURE.read_bytes()})
    assert results["score"] == 4, results
    tests = _tests(results)
    assert {n: t["score"] for n, t in tests.items() if "graded by hand" not in n} == {
        "01_tiny:double": 1,
        "01_tiny:area": 2,
        "01_tiny:vowels": 1,
    }
    written = tests["01_tiny:why_no_y (graded by hand)"]
    assert written["score"] == 0 and written["max_score"] == 0 and "up to 1 point," in written["output"]
    assert "graded: 01_tiny.ipynb" in results["output"]
    assert "isolation: " in run.stdout  # the instructor's log (results/stdout on Gradescope) says which sandbox


@pytest.mark.slow
def test_the_blank_release_earns_nothing(autograder, released):
    results, _ = _submit(autograder, {FIXTURE.name: nbformat.writes(released).encode()})
    assert results["score"] == 0, results
    for name, test in _tests(results).items():
        assert test["score"] == 0, name
        if "graded by hand" in name:
            assert "left it blank" in test["output"]
        else:
            assert test["max_score"] > 0 and test["output"].startswith("not answered"), test


@pytest.mark.slow
def test_a_wrong_answer_loses_its_points(autograder, released):
    # x + 2 passes the visible check (double(2) == 4) and fails the hidden tests; area is right only if the kernel
    # cannot read the bundled solution (<root>/source is hidden from it, where the machine gives a sandbox)
    solution = autograder / "source" / "solution" / FIXTURE.name
    peeks = f"def area(r):\n    try:\n        open({str(solution)!r}).read()\n    except OSError:\n"
    peeks += "        return math.pi * r ** 2\n    return -1.0"
    answers = {"vowels": SOLUTIONS["vowels"], "area": peeks, "double": "def double(x):\n    return x + 2"}
    answers["why_no_y"] = "Because the exercise lists a e i o u."
    results, run = _submit(autograder, {"Copy of 01_tiny.ipynb": _answered(released, answers)})
    sandboxed = "isolation: no filesystem sandbox" not in run.stdout
    assert results["score"] == (3 if sandboxed else 1), (results, run.stdout)
    tests = _tests(results)
    assert tests["01_tiny:double"]["score"] == 0 and tests["01_tiny:double"]["status"] == "failed"
    assert tests["01_tiny:double"]["output"].startswith("passes the visible check but not the hidden tests")
    assert "lists a e i o u" in tests["01_tiny:why_no_y (graded by hand)"]["output"]
    assert "graded: Copy of 01_tiny.ipynb" in results["output"]
    assert "double(-3)" not in json.dumps(results)  # the hidden tests' code never reaches the student


def test_a_submission_without_a_notebook_says_what_to_upload(tmp_path):
    archive = tmp_path / "a.zip"
    assert grading_main(["gradescope-zip", str(FIXTURE), "--out", str(archive), "--no-wheels"]) == 0
    root = _unpack(archive, tmp_path / "autograder")
    (root / "submission").mkdir()
    (root / "submission" / "notes.txt").write_text("hello")
    results = run_autograder(root)  # nothing to run: in this process, without a kernel or a calibration
    _check_schema(results)
    assert results["score"] == 0 and "no notebook (.ipynb): only notes.txt" in results["output"]
    assert "Upload 01_tiny.ipynb" in results["output"]


@pytest.mark.slow
def test_the_zip_carries_the_course_wheels(tmp_path):
    archive = tmp_path / "a.zip"
    assert grading_main(["gradescope-zip", str(FIXTURE), "--out", str(archive)]) == 0
    with zipfile.ZipFile(archive) as z:
        wheels = [n for n in z.namelist() if n.startswith("wheels/")]
        setup = z.read("setup.sh").decode()
    assert sorted(w.split("/")[1].split("-")[0] for w in wheels) == ["course_tools", "course_utils"], wheels
    for wheel in wheels:
        assert f'"$HERE/{wheel}' in setup, wheel
