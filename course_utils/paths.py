"""Where the course is on this machine, and how to show a path to a reader (used by every lesson's printouts)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "COURSE_CACHE_DIR"


def cache_root() -> Path:
    """Where the course keeps what it builds on this machine (checkpoints trained or put together on first use):
    ``$COURSE_CACHE_DIR``, else ``$XDG_CACHE_HOME/bert-transfer-course``, else ``~/.cache/bert-transfer-course``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = (
        Path(os.environ["XDG_CACHE_HOME"]).expanduser() if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    )
    return base / "bert-transfer-course"


def repo_root() -> Path | None:
    """The course checkout: the folder holding ``pyproject.toml`` and ``course_utils/``, or None if not in one
    (as after ``pip install`` on Colab)."""
    here = Path(__file__).resolve().parent.parent
    cwd = Path.cwd().resolve()
    for base in (here, cwd, *cwd.parents):
        if (base / "pyproject.toml").is_file() and (base / "course_utils").is_dir():
            return base
    return None


def describe_path(path: Path | str) -> str:
    """A path as a reader should see it: relative to the repository where that is short, never machine-specific."""
    path = Path(path).resolve()
    root = repo_root()
    if root is not None:
        try:
            if path.is_relative_to(root.parent):
                return os.path.relpath(path, root)
        except ValueError:
            pass
    package = Path(__file__).resolve().parent
    if path.is_relative_to(package):  # an installed course (site-packages): name the package, not the machine
        return f"course_utils/{path.relative_to(package).as_posix()}"
    home = Path.home().resolve()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
