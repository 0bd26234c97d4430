"""The one call at the top of every notebook: seed, pick device and profile, quiet the noise, say what is in use."""
from __future__ import annotations

import logging
import os
import platform
import random
import warnings
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import torch

from .profiles import Profile, get_profile
from .resources import OFFLINE_CHECKPOINTS, describe_path, hub_status, mirror_candidates, mirror_dir

QUIET_ENV = "COURSE_QUIET"


@dataclass(frozen=True)
class Session:
    """What ``setup`` chose: the profile, the device, the seed and where resources come from."""

    profile: Profile
    device: torch.device
    seed: int
    hub: str
    mirror: str
    quiet: bool


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (all devices)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}.")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def pick_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def is_quiet() -> bool:
    """True under tests and the headless course run (``COURSE_QUIET=1``)."""
    return os.environ.get(QUIET_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def quiet_libraries() -> None:
    """Progress bars and warnings off: for tests and headless runs, where they only clutter stderr."""
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore")
    import datasets
    import transformers

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def setup(seed: int = 0, profile: str | None = None, verbose: bool = True) -> Session:
    """Seed everything, choose device and profile, quiet libraries under tests, print an environment summary.

    ``profile`` overrides ``$COURSE_PROFILE``; with neither, it is 'full' on a CUDA machine and 'quick' otherwise.
    """
    chosen = get_profile(profile)
    seed_everything(seed)
    quiet = is_quiet()
    if quiet:
        quiet_libraries()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    device = pick_device()
    usable, why = hub_status("dataset")
    mirror = mirror_dir()
    mirror_text = describe_path(mirror) if mirror else f"none (looked at {', '.join(map(str, mirror_candidates())) or 'nothing'})"
    session = Session(chosen, device, seed, why, mirror_text, quiet)
    if verbose:
        encoder_source = "hub" if usable else ("offline: " + ("packaged" if chosen.encoder in OFFLINE_CHECKPOINTS else "local copy needed"))
        rows = [
            ("profile", f"{chosen.name}  (COURSE_PROFILE={os.environ.get('COURSE_PROFILE', 'unset')})"),
            ("device", f"{device}" + (f"  ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else f"  ({torch.get_num_threads()} CPU threads)")),
            ("seed", str(seed)),
            ("python", platform.python_version()),
            ("torch / transformers / datasets", f"{torch.__version__} / {_version('transformers')} / {_version('datasets')}"),
            ("hub", why),
            ("dataset mirror", mirror_text),
            ("encoder checkpoint", f"{chosen.encoder}  ({encoder_source})"),
        ]
        width = max(len(k) for k, _ in rows)
        print("\n".join(f"{k:<{width}} : {v}" for k, v in rows))
    return session
