"""Gradescope's autograder for one lesson: the zip Gradescope takes, and what runs inside it.

    python -m course_tools.grading gradescope-zip notebooks/01_masking.ipynb --out autograder-01.zip

Gradescope's format (https://gradescope-autograders.readthedocs.io/en/latest/specs/): a zip with ``setup.sh`` and
``run_autograder`` at its root. Gradescope unpacks it into ``/autograder/source`` and runs ``setup.sh`` there once,
as root, when it builds the assignment's image (Ubuntu, with Python 3). For each submission it puts the student's
files in ``/autograder/submission``, runs ``/autograder/run_autograder`` from ``/autograder`` and shows the student
``/autograder/results/results.json``: a ``score``, an ``output`` and ``tests``, each with ``name``, ``score``,
``max_score``, ``output`` and ``visibility``. What ``run_autograder`` prints goes to ``results/stdout``, which only
instructors see.

The zip :func:`build_zip` writes holds

- ``setup.sh``: a virtual environment in ``<root>/venv`` with a Python of at least 3.11 (installed with apt-get where
  the image has none), torch's CPU build at this environment's version, and the course's two packages as wheels built
  from this checkout (``course_utils`` with its ``offline`` extra, ``course_tools``), every other package pinned to
  the version installed here (``constraints.txt``); bubblewrap where apt-get can install it. Last it *calibrates*
  (:func:`calibrate_autograder`): it grades the solution notebook exactly as a submission, as ``autograde`` does
  before a batch, so that an image where the solution does not earn every point fails its build (with the lesson,
  the cell and the error in the build's output) instead of failing every student; and the lesson's downloads land in
  the image's caches;
- ``run_autograder``: ``<root>/venv/bin/python -m course_tools.grading.gradescope run --root <root>``
  (:func:`run_autograder`);
- ``autograder.json`` (the notebook and the limits), ``solution/<notebook>.ipynb`` (the instructor's notebook, its
  outputs cleared), ``wheels/``, ``constraints.txt``.

Grading one submission is :func:`.autograde.autograde`'s grading of one student's notebook, with its functions: the
same sandbox policy and isolation (:func:`.environment.sandbox_policy`, :func:`.isolation.detect_isolation`; the
kernels cannot read ``<root>/source``, which holds the solution, nor ``submission`` and ``results``), the same limits
(per exercise cell, per notebook: 3 x the calibration run + 60 s unless ``--time-limit`` was given; memory), the same
scoring (:func:`.scoring.grade_notebook`) and feedback (:func:`.reporting.gradescope_results`). Written answers,
graded by hand, are tests too, worth 0 of 0 points with a note that the instructor grades them (so the autograder's
total stays the exercises' points); the instructor grades them in Gradescope as a question of its own.

The autograder's root directory is a parameter (``--root``, ``run_autograder``'s first argument, or
``$AUTOGRADER_ROOT``; default ``/autograder``), so it can run anywhere laid out as Gradescope lays it out.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

import course_utils
from course_utils.atomic import atomic_write_text

from .autograde import _subreaper, _writing
from .environment import kernel_environment, sandbox_policy
from .exercises import Exercise, ExerciseError, find_exercises, find_written_answers
from .isolation import CHOICES
from .isolation import detect_isolation as _detect_isolation
from .reporting import gradescope_results
from .runner import Limits
from .sandbox import Policy
from .scoring import GRADER_ERROR, NOT_SUBMITTED, CalibrationError, NotebookGrade, Written, calibrate, grade_notebook
from .scoring import zero_grade as _zero_grade

DEFAULT_ROOT = Path("/autograder")
SOURCE, SUBMISSION, RESULTS = "source", "submission", "results"  # Gradescope's folders under the root
CONFIG, CALIBRATION, SOLUTION, WHEELS = "autograder.json", "calibration.json", "solution", "wheels"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
OWN_DISTRIBUTIONS = {"course-utils", "course-tools", "torch", "pip", "setuptools", "wheel"}  # never in constraints
HAND_GRADED = "graded by hand"


class AutograderError(RuntimeError):
    """The autograder itself cannot grade (not set up, a broken environment): the instructor's to fix."""


# ------------------------------------------------------------------------------------------------ the configuration
@dataclass(frozen=True)
class AutograderConfig:
    """What ``autograder.json`` records: the lesson, the limits and the isolation asked for."""

    notebook: str  # the lesson's stem, e.g. "01_masking"
    limits: Limits = Limits()
    isolation: str | None = None  # auto, bubblewrap or landlock; None: $COURSE_GRADING_ISOLATION, else auto

    def to_json(self) -> str:
        limits = {
            "notebook_seconds": self.limits.notebook_seconds,
            "cell_seconds": self.limits.cell_seconds,
            "memory_mb": self.limits.memory_mb,
        }
        return json.dumps({"notebook": self.notebook, "limits": limits, "isolation": self.isolation}, indent=1)

    @classmethod
    def read(cls, source: Path) -> AutograderConfig:
        """The configuration in ``source/autograder.json``; ``AutograderError`` when it is missing or unreadable."""
        path = source / CONFIG
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            limits = Limits(**data.get("limits", {}))
            return cls(str(data["notebook"]), limits, data.get("isolation"))
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise AutograderError(
                f"cannot read the autograder's configuration {path} ({type(err).__name__}: {err}); was the zip "
                "made by `python -m course_tools.grading gradescope-zip` and unpacked into <root>/source?"
            ) from None


def _solution(root: Path, config: AutograderConfig) -> tuple[Any, list[Exercise]]:
    path = root / SOURCE / SOLUTION / f"{config.notebook}.ipynb"
    try:
        nb = nbformat.read(path, as_version=4)
    except OSError as err:
        raise AutograderError(f"the solution notebook {path} cannot be read: {err}") from None
    return nb, find_exercises(nb, config.notebook)


def _sandbox(root: Path, config: AutograderConfig) -> tuple[Policy, dict[str, str]]:
    """The isolation and environment :func:`.autograde.autograde` gives its kernels, with Gradescope's folders in the
    roles of its own: ``source`` (the solution) hidden like the instructor's checkout, ``submission`` like the
    submissions, ``results`` like the grade table and feedback."""
    try:
        isolation = _detect_isolation(config.isolation)
    except ValueError as err:
        raise AutograderError(str(err)) from None
    results = root / RESULTS
    results.mkdir(parents=True, exist_ok=True)
    policy = isolation.apply(sandbox_policy(root / SOURCE, root / SUBMISSION, results, results))
    _subreaper()
    print(isolation.describe(), flush=True)
    if isolation.warning:
        print(isolation.warning, flush=True)
    return policy, kernel_environment()


# ------------------------------------------------------------------------------------------------------ calibration
def calibrate_autograder(root: Path | str = DEFAULT_ROOT) -> dict[str, Any]:
    """Grade the solution notebook as a submission (:func:`.scoring.calibrate`, as ``autograde`` does before a batch)
    and record in ``<root>/source/calibration.json`` how long it took and the time limit per submission it sets.
    ``AutograderError`` (the lesson, the cell, the error, its likely cause) unless it earns every point."""
    root = Path(root)
    config = AutograderConfig.read(root / SOURCE)
    solution, exercises = _solution(root, config)
    policy, env = _sandbox(root, config)
    name = config.notebook
    try:
        took, slowest = calibrate([name], {name: solution}, {name: exercises}, config.limits, policy, env)[name]
    except CalibrationError as err:
        raise AutograderError(str(err)) from None
    limits = config.limits.calibrated(name, took, slowest)  # autograde's rule, where no flag set them
    record = {
        "notebook": name,
        "seconds": round(took, 1),
        "notebook_seconds": round(limits.notebook_seconds),
        "cell_seconds": round(limits.cell_seconds),
    }
    atomic_write_text(root / SOURCE / CALIBRATION, json.dumps(record, indent=1))
    print(
        f"calibration: {name}: the solution earns every point in {took:.0f} s; limits per submission "
        f"{limits.notebook_seconds:.0f} s, {limits.cell_seconds:.0f} s per exercise cell"
    )
    return record


def _calibration(root: Path, config: AutograderConfig) -> dict[str, Any]:
    """The calibration ``setup.sh`` recorded; made now if there is none (it costs one run of the solution)."""
    path = root / SOURCE / CALIBRATION
    if path.is_file():
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("notebook") == config.notebook:
            return record
    print(f"no calibration in {path}: calibrating now (setup.sh does it once, when the image is built)")
    return calibrate_autograder(root)


# -------------------------------------------------------------------------------------------- grading a submission
def submitted_notebook(folder: Path, name: str) -> tuple[bytes | None, str]:
    """The student's copy of notebook ``name`` in ``folder`` and the file's path there: the file of that name, else
    the one notebook whose name contains it (``Copy of 01_masking.ipynb``, ``01_masking (1).ipynb``), else the only
    notebook handed in. ``(None, why)`` where there is none, or several and none of them is named after the lesson."""
    files = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts) if folder.is_dir() else []
    exact = [p for p in files if p.stem == name]
    loose = [p for p in files if name in p.stem]
    chosen = exact[0] if exact else loose[0] if len(loose) == 1 else files[0] if len(files) == 1 else None
    if chosen is not None:
        return chosen.read_bytes(), chosen.relative_to(folder).as_posix()
    if not files:
        handed = (
            sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
            if folder.is_dir()
            else []
        )
        return None, f"your submission holds no notebook (.ipynb){': only ' + ', '.join(handed[:10]) if handed else ''}"
    return None, (
        f"your submission holds several notebooks and none is named {name}.ipynb: "
        + ", ".join(p.relative_to(folder).as_posix() for p in files[:10])
    )


def autograder_results(grade: NotebookGrade, graded_file: str | None, note: str = "") -> dict[str, Any]:
    """Gradescope's ``results.json`` for one submission: :func:`.reporting.gradescope_results` (the score, one test
    per exercise, the notes) with a first line saying which file was graded, and one test per written answer worth
    0 of 0 points that says it is graded by hand (and what the grader read there)."""
    results = gradescope_results([grade])
    earned, possible = grade.points
    head = (
        f"{grade.notebook}: {earned:g} / {possible:g} points from the autograder"
        + (f" (graded: {graded_file})" if graded_file else "")
        + "."
    )
    results["output"] = "\n".join(line for line in (head, note, results["output"]) if line)
    for column, written in grade.writing.items():
        if getattr(written, "points", None) is not None:  # already given by the instructor: gradescope_results has it
            continue
        answer = (
            "Your answer, as the grader read it:\n\n" + written.text
            if written.text
            else "You left it blank: it earns nothing."
        )
        results["tests"].append(
            {
                "name": f"{column} ({HAND_GRADED})",
                "score": 0.0,
                "max_score": 0.0,
                "output": f"A written answer, worth up to {written.max_points:g} "
                f"point{'s' * (written.max_points != 1)}, {HAND_GRADED} by your "
                f"instructor: not in the autograder's score. {answer}",
                "visibility": "visible",
            }
        )
    results["stdout_visibility"] = "hidden"
    return results


def _grade(root: Path, config: AutograderConfig) -> dict[str, Any]:
    """Grade ``<root>/submission`` against the solution as ``autograde`` grades one student's notebook."""
    solution, exercises = _solution(root, config)
    questions = find_written_answers(solution, config.notebook)  # the rubrics are not needed here: no folder
    data, found = submitted_notebook(root / SUBMISSION, config.notebook)
    if data is None:
        print(f"not graded: {found}")
        grade = _zero_grade(config.notebook, exercises, NOT_SUBMITTED)
        grade.writing = {q.column: Written(q.points, "") for q in questions}
        return autograder_results(grade, None, f"Nothing was graded: {found}. Upload {config.notebook}.ipynb.")
    limits = config.limits.for_notebook(config.notebook)
    calibration = _calibration(root, config)
    if config.limits.notebook_seconds is None:
        limits = replace(limits, notebook_seconds=float(calibration["notebook_seconds"]))
    if config.limits.cell_seconds is None and "cell_seconds" in calibration:
        limits = replace(limits, cell_seconds=float(calibration["cell_seconds"]))
    policy, env = _sandbox(root, config)
    try:
        grade = grade_notebook(config.notebook, solution, exercises, data, limits, policy, env)
    except Exception as err:  # noqa: BLE001 - as in autograde: the submission gets zero and the reason
        traceback.print_exc(file=sys.stdout)
        grade = _zero_grade(config.notebook, exercises, f"{GRADER_ERROR}: {type(err).__name__}: {err}")
    grade.writing = {q.column: Written(q.points, text) for q, text in _writing(data, questions)}
    earned, possible = grade.points
    print(f"graded {found}: {earned:g} / {possible:g}")
    for column, outcome in grade.outcomes.items():
        print(f"  {column}: {outcome.points:g} / {outcome.max_points:g}  {outcome.reason}")
    for error in grade.lesson_errors:
        print(f"  NEEDS A LOOK: lesson {error}")
    return autograder_results(grade, found)


def run_autograder(root: Path | str = DEFAULT_ROOT) -> dict[str, Any]:
    """Grade the notebook in ``<root>/submission`` and write ``<root>/results/results.json``; return what it holds.

    Whatever happens, a ``results.json`` is written: where the autograder itself cannot grade (not set up, the
    solution no longer earns every point, an isolation asked for that the image lacks) the student gets 0 and a
    line asking them to tell the instructor, and ``results/stdout`` (the instructor's) says why."""
    root = Path(root)
    start = time.monotonic()
    try:
        results = _grade(root, AutograderConfig.read(root / SOURCE))
    except (AutograderError, ExerciseError) as err:
        print(f"error: {err}")
        results = _broken(str(err).splitlines()[0])
    except Exception as err:  # noqa: BLE001 - the student gets a results.json whatever broke
        traceback.print_exc(file=sys.stdout)
        results = _broken(f"{type(err).__name__}: {err}")
    results["execution_time"] = round(time.monotonic() - start)
    (root / RESULTS).mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / RESULTS / "results.json", json.dumps(results, indent=1))
    return results


def _broken(why: str) -> dict[str, Any]:
    return {
        "score": 0.0,
        "output": "The autograder could not grade this submission: the problem is the autograder's, not your "
        f"notebook's. Tell your instructor. ({why[:300]})",
        "tests": [],
        "stdout_visibility": "hidden",
    }


# ----------------------------------------------------------------------------------------------------- the zip file
SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu with Python 3): a virtual
# environment with the course's grader, then the solution graded as a submission (the calibration).
# Made by `python -m course_tools.grading gradescope-zip`; see the course's docs/guide/instructors.md.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/venv"
TORCH="${TORCH:-@TORCH@}"
TORCH_INDEX="${TORCH_INDEX:-@TORCH_INDEX@}"
APT="${COURSE_AUTOGRADER_APT:-1}"  # 0: never run apt-get (a trial run on a machine of your own)
UPDATED=0

apt_install() {
  [ "$APT" = 1 ] && command -v apt-get >/dev/null || return 1
  if [ "$UPDATED" = 0 ]; then apt-get update -q || true; UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}
recent() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }

PY=""
for candidate in @PYTHONS@; do
  if command -v "$candidate" >/dev/null && recent "$candidate"; then PY="$(command -v "$candidate")"; break; fi
done
if [ -z "$PY" ]; then
  echo "no Python 3.11 or newer here: installing python3.11 with apt-get"
  apt_install python3.11 python3.11-venv || true
  if command -v python3.11 >/dev/null && recent python3.11; then PY="$(command -v python3.11)"; fi
fi
if [ -z "$PY" ]; then
  echo "error: the course needs Python 3.11 or newer and this image has none; choose a newer Ubuntu base image" \
       "(24.04 comes with Python 3.12) in the assignment's autograder settings" >&2
  exit 1
fi
echo "Python: $PY ($("$PY" --version))"
if ! "$PY" -m venv "$VENV"; then
  rm -rf "$VENV"
  apt_install "$(basename "$PY")-venv" || apt_install python3-venv || true
  "$PY" -m venv "$VENV" || { echo "error: $PY cannot make a virtual environment (install python3-venv)" >&2; exit 1; }
fi
command -v bwrap >/dev/null || apt_install bubblewrap \
  || echo "bubblewrap not installed: the grader uses Landlock where the kernel offers it"
PIP=("$VENV/bin/python" -m pip install --quiet --no-input)
"${PIP[@]}" --upgrade pip
if "$VENV/bin/python" -c "import socket, sys, urllib.parse as u; h = u.urlparse(sys.argv[1]); \
socket.create_connection((h.hostname, h.port or 443), 5)" "$TORCH_INDEX" 2>/dev/null; then
  echo "installing $TORCH (CPU build) from $TORCH_INDEX"
  "${PIP[@]}" "$TORCH" --index-url "$TORCH_INDEX"
else
  echo "$TORCH_INDEX cannot be reached: installing $TORCH from pip's configured sources"
  "${PIP[@]}" "$TORCH"
fi
"${PIP[@]}" @CONSTRAINTS@ "$HERE/@WHEEL_UTILS@[offline]" "$HERE/@WHEEL_TOOLS@"
"$VENV/bin/python" -m course_tools.grading.gradescope calibrate --root "$ROOT"
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root, from /autograder: it grades /autograder/submission and writes
# /autograder/results/results.json. The root is its first argument, else $AUTOGRADER_ROOT, else /autograder.
ROOT="${1:-${AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${COURSE_AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
if [ ! -x "$PYTHON" ]; then
  mkdir -p "$ROOT/results"
  echo '{"score": 0, "output": "The autograder is not set up (it has no Python environment): tell your instructor.",
 "tests": []}' > "$ROOT/results/results.json"
  echo "error: $PYTHON is missing: setup.sh did not run, or failed" >&2
  exit 1
fi
exec "$PYTHON" -m course_tools.grading.gradescope run --root "$ROOT"
"""

README = """This is a Gradescope autograder for the course lesson {notebook}, made by
`python -m course_tools.grading gradescope-zip`. Upload the zip as the programming assignment's autograder.
It holds the instructor's solution notebook (solution/): keep it private.
"""


def _checkout_roots() -> tuple[Path, Path]:
    """The checkout's two project folders: the one holding course_utils, and tools/ holding course_tools."""
    utils_root = Path(course_utils.__file__).resolve().parents[1]
    tools_root = Path(__file__).resolve().parents[2]
    for folder, package in ((utils_root, "course_utils"), (tools_root, "course_tools")):
        if not (folder / "pyproject.toml").is_file() or not (folder / package).is_dir():
            raise AutograderError(
                f"{package} is not installed from a checkout ({folder} has no pyproject.toml beside it): run "
                "gradescope-zip in the course's repository, after `make env` (pip install -e . and -e tools)"
            )
    return utils_root, tools_root


def build_wheels(out: Path) -> list[Path]:
    """Build ``course_utils`` and ``course_tools`` wheels from this checkout into ``out``, each from a copy of what
    its build reads (so the checkout gets no build folders), as ``tests/test_student_wheel.py`` builds the first."""
    utils_root, tools_root = _checkout_roots()
    built = []
    with tempfile.TemporaryDirectory(prefix="course-wheels-") as scratch:
        for root, package, extra in (
            (utils_root, "course_utils", ("README.md", "LICENSE")),
            (tools_root, "course_tools", ()),
        ):
            copy = Path(scratch) / package
            copy.mkdir()
            for name in ("pyproject.toml", *extra):
                if (root / name).is_file():
                    shutil.copy2(root / name, copy / name)
            shutil.copytree(root / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w"]
            run = subprocess.run([*command, str(out), "."], cwd=copy, capture_output=True, text=True)
            if run.returncode != 0:
                raise AutograderError(f"building the {package} wheel failed:\n{(run.stderr or run.stdout)[-2000:]}")
            found = sorted(out.glob(f"{package}-*.whl"))
            if not found:
                raise AutograderError(f"pip wheel made no {package}-*.whl in {out}")
            built.append(found[-1])
    return built


def constraints() -> str:
    """``name==version`` for every distribution installed here except the course's own, torch (installed first, from
    its CPU index) and pip's tools: the image resolves the packages the course needs to the versions tested here."""
    pins = {}
    for dist in importlib.metadata.distributions():
        name, version = dist.metadata["Name"], dist.version
        if not name or canonicalize_name(name) in OWN_DISTRIBUTIONS:
            continue
        try:
            if Version(version).local:  # a local build (+cpu): not on the package index
                continue
        except InvalidVersion:
            continue
        pins[canonicalize_name(name)] = f"{canonicalize_name(name)}=={version}"
    return "".join(f"{line}\n" for _, line in sorted(pins.items()))


def torch_requirement(torch: str | None) -> str:
    """``torch==X`` as installed here (its public version, without ``+cpu``), or ``torch`` itself where it is
    missing; an explicit ``torch`` (a requirement such as ``torch==2.13.0``) wins."""
    if torch:
        Requirement(torch)  # a clear error now rather than in the image build
        return torch
    try:
        return f"torch=={Version(importlib.metadata.version('torch')).public}"
    except importlib.metadata.PackageNotFoundError:
        return "torch"


def _pythons() -> str:
    """Pythons for setup.sh to try, this one's version first."""
    here = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return " ".join(dict.fromkeys([here, "python3.13", "python3.12", "python3.11", "python3"]))


def build_zip(
    notebook: Path | str,
    out: Path | str,
    limits: Limits | None = None,
    isolation: str | None = None,
    wheels: bool = True,
    pin: bool = True,
    torch: str | None = None,
) -> list[str]:
    """Write Gradescope's autograder zip for the solution notebook ``notebook`` to ``out``; return its file names.

    ``limits`` and ``isolation`` are ``autograde``'s (``--time-limit``, ``--cell-time-limit``, ``--memory-mb``,
    ``--isolation``); ``pin`` pins every package to this environment's version; ``torch`` overrides the torch
    requirement (default: the version installed here). ``wheels=False`` leaves the wheels out: such a zip cannot set
    itself up, but shows the layout (and is what the tests grade with, in this environment)."""
    notebook, out = Path(notebook), Path(out)
    if notebook.suffix != ".ipynb" or not notebook.is_file():
        raise AutograderError(
            f"{notebook} is not a notebook file: give one solution notebook, e.g. notebooks/01_masking.ipynb"
        )
    name = notebook.stem
    nb = nbformat.read(notebook, as_version=4)
    if not find_exercises(nb, name):
        raise AutograderError(f"{notebook} has no exercises (nbgrader solution and grade cells): nothing to autograde")
    find_written_answers(nb, name)
    for cell in nb.cells:  # the grader reads the cells' code only: outputs would only make the zip bigger
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    config = AutograderConfig(name, limits or Limits(), isolation)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-gradescope-") as scratch:
        built = build_wheels(Path(scratch)) if wheels else []
        names = {p.name.split("-")[0]: f"{WHEELS}/{p.name}" for p in built}
        setup = (
            SETUP_SH.replace("@TORCH@", torch_requirement(torch))
            .replace("@TORCH_INDEX@", TORCH_INDEX)
            .replace("@PYTHONS@", _pythons())
            .replace("@CONSTRAINTS@", '-c "$HERE/constraints.txt"' if pin else "")
            .replace("@WHEEL_UTILS@", names.get("course_utils", f"{WHEELS}/course_utils-MISSING.whl"))
            .replace("@WHEEL_TOOLS@", names.get("course_tools", f"{WHEELS}/course_tools-MISSING.whl"))
        )
        partial = out.with_name(out.name + ".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            _add(archive, "setup.sh", setup, executable=True)
            _add(archive, "run_autograder", RUN_AUTOGRADER, executable=True)
            _add(archive, CONFIG, config.to_json() + "\n")
            _add(archive, f"{SOLUTION}/{name}.ipynb", nbformat.writes(nb))
            _add(archive, "README.md", README.format(notebook=name))
            if pin:
                _add(archive, "constraints.txt", constraints())
            for path in built:
                archive.write(path, f"{WHEELS}/{path.name}", compress_type=zipfile.ZIP_STORED)  # already compressed
            listed = archive.namelist()
        partial.replace(out)
    return listed


def _add(archive: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=time.localtime()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    archive.writestr(info, text)


# ------------------------------------------------------------------------------------------------- command lines
def add_zip_parser(commands: Any) -> None:
    """The ``gradescope-zip`` subcommand of ``python -m course_tools.grading``."""
    parser = commands.add_parser(
        "gradescope-zip", help="write a Gradescope autograder (setup.sh, run_autograder, the solution) for a lesson"
    )
    parser.add_argument("notebook", help="the solution notebook, e.g. notebooks/01_masking.ipynb")
    parser.add_argument("--out", default=None, help="the zip to write (default: autograder-<notebook>.zip)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per submission (default: 3 x the solution's run in the image, measured by setup.sh, + 60)",
    )
    parser.add_argument(
        "--cell-time-limit",
        type=float,
        default=None,
        help="seconds per exercise cell or check (default: 3 times the solution's slowest in calibration + 30, "
        "at least 60; 60 without calibration)",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=None, help="memory per submission (default: the profile's budget + 1 GB)"
    )
    parser.add_argument("--isolation", choices=CHOICES, default=None, help="as autograde's (default: auto)")
    parser.add_argument(
        "--torch", default=None, help="the torch requirement setup.sh installs (default: this environment's version)"
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="let pip pick the versions (default: pinned to this environment's)"
    )
    parser.add_argument(
        "--no-wheels", action="store_true", help="leave the course's wheels out (the layout only: it cannot set up)"
    )


def zip_command(args: argparse.Namespace) -> int:
    """``gradescope-zip``: write the zip and say what to do with it."""
    out = Path(args.out or f"autograder-{Path(args.notebook).stem}.zip")
    limits = Limits(args.time_limit, args.cell_time_limit, args.memory_mb)
    try:
        names = build_zip(args.notebook, out, limits, args.isolation, not args.no_wheels, not args.no_pin, args.torch)
    except (AutograderError, ExerciseError, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    size = out.stat().st_size / 1e6
    print(f"wrote {out} ({size:.1f} MB): {', '.join(names)}")
    name = Path(args.notebook).stem
    nb = nbformat.read(args.notebook, as_version=4)
    exercises, written = find_exercises(nb, name), find_written_answers(nb, name)
    print(
        f"the autograder's points: {sum(e.points for e in exercises):g} ({len(exercises)} exercises)"
        + (
            f"; written answers, graded by hand (a question of their own in Gradescope): "
            f"{sum(q.points for q in written):g} points"
            if written
            else ""
        )
    )
    print(
        "Upload it as the programming assignment's autograder (Configure Autograder, zip file upload, an Ubuntu base "
        "image); the image's build installs the grader and grades your solution once (it must earn every point). "
        "It holds your solution notebook: keep it private."
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Inside the image: ``calibrate`` (setup.sh) and ``run`` (run_autograder), each with ``--root``."""
    parser = argparse.ArgumentParser(
        prog="python -m course_tools.grading.gradescope", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command, text in (
        ("run", "grade <root>/submission and write <root>/results/results.json (run_autograder)"),
        ("calibrate", "grade the solution as a submission and record the time limit it sets (setup.sh)"),
    ):
        sub = commands.add_parser(command, help=text)
        sub.add_argument("--root", default=str(DEFAULT_ROOT), help=f"the autograder's root (default: {DEFAULT_ROOT})")
    args = parser.parse_args(argv)
    if args.command == "run":
        run_autograder(args.root)
        return 0
    try:
        calibrate_autograder(args.root)
    except (AutograderError, ExerciseError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
