"""Every pytest run (unit tests and the notebooks under nbval) is offline, in the quick profile, quiet, and plays a
student: without the offline mirror.

Notebook kernels started by nbval inherit this environment. ``$COURSE_DATA_DIR`` points at a stand-in for the hub
(tests/hub_standin.py) that holds only the datasets the registry takes from the hub, so a lesson that needs anything
else of ``../shared/data`` fails here as it would for a student. Fixtures live in tests/conftest.py.
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
import hub_standin  # noqa: E402

os.environ.setdefault("COURSE_PROFILE", "quick")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("COURSE_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if "COURSE_DATA_DIR" not in os.environ:
    _standin = Path(os.environ.get("COURSE_HUB_STANDIN") or hub_standin.ROOT / "build" / "hub-standin").resolve()
    _mirror = hub_standin.default_mirror()
    if not _mirror.is_dir():
        raise RuntimeError(f"The tests need the offline mirror at {_mirror} to stand in for the hub.")
    hub_standin.build(_standin, _mirror)
    os.environ["COURSE_DATA_DIR"] = str(_standin)
