"""A stand-in for the Hugging Face hub, for tests: a folder holding only the datasets the registry takes from the hub.

Students have the hub and no mirror; CI and developers have the mirror (``../shared/data``) and no hub. Pointing
``$COURSE_DATA_DIR`` at this folder makes a test run see what a student sees: the course's shipped data from the
package, the hub's datasets from here, and nothing else of the mirror. conftest.py builds it for every test run;
``python tests/hub_standin.py FOLDER`` builds it by hand (then ``COURSE_DATA_DIR=FOLDER make course``).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_utils import registry  # noqa: E402


def hub_folders() -> list[str]:
    """The mirror folders of the datasets the registry says come from the hub."""
    return [e.folder for e in registry.DATASETS if not e.shipped]


def build(target: Path, mirror: Path) -> list[str]:
    """Copy the hub datasets the mirror has into ``target`` (files already there with the same size are kept);
    remove anything else there. Returns the folder names copied."""
    target.mkdir(parents=True, exist_ok=True)
    wanted = [name for name in hub_folders() if (mirror / name).is_dir()]
    for stray in target.iterdir():
        if stray.name not in wanted:
            shutil.rmtree(stray) if stray.is_dir() else stray.unlink()
    for name in wanted:
        for source in (mirror / name).rglob("*"):
            dest = target / name / source.relative_to(mirror / name)
            if source.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            elif not dest.is_file() or dest.stat().st_size != source.stat().st_size:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)
    return wanted


def default_mirror() -> Path:
    return ROOT.parent / "shared" / "data"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} FOLDER   (copies the hub's datasets from {default_mirror()})")
    folders = build(Path(sys.argv[1]), default_mirror())
    print(f"{sys.argv[1]}: {', '.join(folders)}\nnow: COURSE_DATA_DIR={sys.argv[1]} make course")
