"""The rehearsal of the full profile (``make rehearse``), one test per notebook, so that ``make test`` can share it
out over its lanes with everything else: each notebook in the full profile's code path with random-weight stand-ins
(``course_tools.rehearsal``), every exercise's blank, wrong answers and solution scored before the exercise runs.
``make rehearse`` runs the same and writes the report with its table of wrong answers (build/rehearsal/)."""

import os
from pathlib import Path

import pytest
from filelock import FileLock

from course_tools import rehearsal, run_course
from course_tools.grading.wrong_answers import problems

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "rehearsal"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


@pytest.fixture(scope="session")
def rehearsal_env() -> dict[str, str]:
    """The stand-ins, built once (several test processes may ask at once) and reused -> the rehearsal's environment,
    with the offline mirror that conftest.py keeps in $COURSE_TEST_MIRROR (the tests' own $COURSE_DATA_DIR is the
    hub's stand-in)."""
    OUT.mkdir(parents=True, exist_ok=True)
    with FileLock(str(OUT / ".standins.lock")):
        return rehearsal.prepare(OUT, mirror=Path(os.environ["COURSE_TEST_MIRROR"]))


@pytest.mark.rehearsal
@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_full_profile_rehearses(source, rehearsal_env, monkeypatch):
    for name, value in rehearsal_env.items():  # for this notebook's kernel only: the next test is a student again
        monkeypatch.setenv(name, value)
    entry = run_course.run_notebook(
        source, OUT, rehearsal.REHEARSAL, timeout=600, wrong_answers=rehearsal.wrong_answers_folder()
    )
    assert entry["status"] == "ok", f"{source.stem} failed in the rehearsal: {entry['error']}"
    found = problems(entry.get("wrong_answers", []))
    assert not found, f"{source.stem}'s exercises, scored in the rehearsal:\n" + "\n".join(found)
