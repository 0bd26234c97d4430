"""What a grading kernel may see: the sandbox policy for a batch (which paths it may read and write) and its
environment variables."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import course_utils
from course_utils.paths import cache_root
from course_utils.resources import mirror_candidates

from .sandbox import Policy

PACKAGE = Path(course_utils.__file__).resolve().parent  # the installed course_utils, which kernels import
TOOLS = Path(__file__).resolve().parents[1]  # course_tools: the launcher (sandbox.py) and guard.py run from it by path


def _repository_of(path: Path) -> Path:
    """The git checkout holding ``path`` (its history holds the solutions too), else ``path`` itself."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return path


def sandbox_policy(source_dir: Path, submissions: Path, out: Path, feedback: Path) -> Policy:
    """Hide the instructor's checkout, the submissions and the outputs; open the packages, the Python installation,
    the data mirror and the caches again (for reading; caches for writing too)."""
    denied = [_repository_of(source_dir.resolve()), submissions.resolve(), feedback.resolve()]
    if out.exists():
        denied.append(out.resolve())
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    # Where a denied tree lies inside the cache (a checkout under ~/.cache), the sandbox can let kernels write into
    # the folders beside it but not create new ones next to it: make the ones lessons write to now.
    for folder in (home_cache / "huggingface", home_cache / "matplotlib", home_cache / "torch", cache_root()):
        folder.mkdir(parents=True, exist_ok=True)
    writable = ["/dev", str(home_cache), str(cache_root())]
    writable += [os.environ[v] for v in ("HF_HOME", "HF_DATASETS_CACHE", "HF_HUB_CACHE") if os.environ.get(v)]
    readable = [str(PACKAGE), str(TOOLS), sys.prefix, sys.base_prefix, *map(str, mirror_candidates())]
    readable += [
        p
        for p in sys.path
        if p
        and Path(p).is_dir()
        and not any(
            d == Path(p).resolve() or d in Path(p).resolve().parents or Path(p).resolve() in d.parents for d in denied
        )
    ]
    return Policy(memory_mb=None, deny=[str(d) for d in denied], writable=writable, readable=readable)


def kernel_environment() -> dict[str, str]:
    """The grading kernels' environment: this one, quiet, offline unless asked, plots kept inline."""
    env = dict(os.environ)
    env.setdefault("COURSE_PROFILE", "quick")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.update(
        {
            "COURSE_QUIET": "1",
            "PYTHONWARNINGS": "ignore",
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "MPLCONFIGDIR": str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matplotlib"),
            "COURSE_CACHE_DIR": str(cache_root()),
        }
    )
    return env
