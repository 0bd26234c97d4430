"""A stand-in for the Hugging Face hub, for tests: a folder holding only the datasets the registry takes from the hub.

Students have the hub and no mirror; CI and developers have the mirror (``../shared/data``) and no hub. Pointing
``$COURSE_DATA_DIR`` at this folder makes a run see what a student sees: the course's shipped data from the package,
the hub's datasets from here, and nothing else of the mirror. A dataset the hub serves as its parquet export (the
registry's ``config_as_data_dir``, CoNLL-2003) is laid out here as on the hub's export branch,
``<config>/<split>/0000.parquet`` with no README, so that tests load it the way a student's run does.

The root conftest.py builds it for every pytest run; by hand:
``python tests/hub_standin.py build/hub-standin``, then
``COURSE_DATA_DIR="$PWD/build/hub-standin" HF_HUB_OFFLINE=1 make course``.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from course_utils import registry  # noqa: E402
from course_utils.resources import mirror_configs  # noqa: E402

MARKER = ".hub-standin"  # only a folder carrying it is ever emptied by build()


def default_mirror() -> Path:
    return ROOT.parent / "shared" / "data"


def _files(entry: registry.DatasetEntry, source: Path) -> dict[Path, Path]:
    """relative path in the stand-in -> file in the mirror, for one hub dataset."""
    if not entry.config_as_data_dir:
        return {p.relative_to(source): p for p in source.rglob("*") if p.is_file()}
    files = {}
    for config in mirror_configs(source):  # the hub's parquet export: <config>/<split>/0000.parquet
        for part in sorted((source / config).glob("*.parquet")):
            split = re.match(r"(\w+?)-\d+-of-\d+", part.stem).group(1)
            files[Path(config) / split / "0000.parquet"] = part
    return files


def build(target: Path, mirror: Path) -> list[str]:
    """Fill ``target`` with the hub datasets the mirror has (unchanged files are kept) and nothing else.
    Returns the folder names."""
    if target.exists() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise FileExistsError(f"{target} is not empty and not a hub stand-in (no {MARKER}): not touching it.")
    target.mkdir(parents=True, exist_ok=True)
    (target / MARKER).write_text("A stand-in for the Hugging Face hub, built by tests/hub_standin.py.\n")
    wanted = {}
    for entry in registry.DATASETS:
        if not entry.shipped and (mirror / entry.folder).is_dir():
            wanted[entry.folder] = _files(entry, mirror / entry.folder)
    for stray in target.iterdir():
        if stray.name not in wanted and stray.name != MARKER:
            shutil.rmtree(stray) if stray.is_dir() else stray.unlink()
    for folder, files in wanted.items():
        for old in (target / folder).rglob("*") if (target / folder).is_dir() else []:
            if old.is_file() and old.relative_to(target / folder) not in files:
                old.unlink()
        for rel, source in files.items():
            dest = target / folder / rel
            if dest.is_file() and (dest.stat().st_size, dest.stat().st_mtime_ns) == (
                source.stat().st_size,
                source.stat().st_mtime_ns,
            ):
                continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
    return sorted(wanted)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} FOLDER   (copies the hub's datasets from {default_mirror()})")
    folders = build(Path(sys.argv[1]), default_mirror())
    print(
        f"{sys.argv[1]}: {', '.join(folders)}\n"
        f'then: COURSE_DATA_DIR="{Path(sys.argv[1]).resolve()}" HF_HUB_OFFLINE=1 make course'
    )
