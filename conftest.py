"""Every pytest run (unit tests and the notebooks under nbval) is offline, in the quick profile, quiet, and plays a
student: without the offline mirror.

Notebook kernels started by nbval inherit this environment. ``$COURSE_DATA_DIR`` points at a stand-in for the hub
(tests/hub_standin.py) that holds only the datasets the registry takes from the hub, so a lesson that needs anything
else of ``../shared/data`` fails here as it would for a student. Fixtures live in tests/conftest.py.
"""

import os
import sys
from pathlib import Path

import pytest

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


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """The lessons' cells (nbval items) carry the ``notebooks`` marker, so ``-m`` can select or leave out that tier."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
