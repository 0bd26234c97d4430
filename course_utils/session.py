"""The one call at the top of every notebook: seed, pick device and profile, quiet the noise, say what is in use."""
from __future__ import annotations

import os
import platform
import random
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import torch

from .claims import use_profile
from .paths import describe_path
from .profiles import Profile, get_profile
from .quiet import is_quiet, quiet_if_asked
from .registry import SHIPPED_ROOT
from .resources import hub_status, mirror_dir, resolve_checkpoint
from .results import record

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


def _cpu_model() -> str:
    """The processor's marketing name where Linux tells it (/proc/cpuinfo), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_name(device: torch.device | str) -> str:
    """What ``device`` is, for printed tables and the course report: ``"cuda (NVIDIA H100 80GB HBM3)"``,
    ``"cpu (AMD EPYC, 2 threads)"``. Timings mean little without it."""
    device = torch.device(device)
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    if device.type == "cpu":
        return f"cpu ({_cpu_model()}, {torch.get_num_threads()} threads)"
    return str(device)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _announce_rehearsal(profile: Profile) -> None:
    """Print and record that this run is a rehearsal, and which stand-ins replace the full profile's checkpoints."""
    # imported on use: rehearsal (and run_course, which it imports) also run as `python -m`, and a module the
    # package imports would then be loaded twice
    from .rehearsal import standins_in_use

    used = standins_in_use(profile)
    print("\nREHEARSAL of the full profile: its code path with steps and examples capped; the checkpoints below are "
          "random-weight stand-ins, so no number here is a result of the real models.")
    for name, where in used.items():
        print(f"  {name}: {where}")
    record(rehearsal=True, standins=sorted(used))


def setup(seed: int = 0, profile: str | None = None, verbose: bool = True) -> Session:
    """Seed everything, choose device and profile, quiet libraries under tests, print an environment summary.

    ``profile`` overrides ``$COURSE_PROFILE``; with neither, it is 'full' on a CUDA machine and 'quick' otherwise.
    """
    chosen = get_profile(profile)
    use_profile(chosen.name)    # the profile every claim of this notebook is checked in
    seed_everything(seed)
    quiet_if_asked()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    device = pick_device()
    _, why = hub_status("dataset")
    mirror = mirror_dir()
    mirror_text = (f"{describe_path(mirror)} (stands in for the hub where there is no internet)" if mirror
                   else "none (not needed where the hub is reachable)")
    session = Session(chosen, device, seed, why, mirror_text, is_quiet())
    if verbose:
        try:  # the resolver's own answer, so the summary can never disagree with what load_model will do
            encoder_source = resolve_checkpoint(chosen.encoder).detail
        except FileNotFoundError:
            encoder_source = "NOT AVAILABLE here: load_model will explain how to provide it"
        rows = [
            ("profile", f"{chosen.name}  (COURSE_PROFILE={os.environ.get('COURSE_PROFILE', 'unset')})"),
            ("device", f"{device}" + (f"  ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else f"  ({torch.get_num_threads()} CPU threads)")),
            ("seed", str(seed)),
            ("python", platform.python_version()),
            ("torch / transformers / datasets", f"{torch.__version__} / {_version('transformers')} / {_version('datasets')}"),
            ("course data", f"{describe_path(SHIPPED_ROOT)} (the corpora the course ships)"),
            ("hub", why),
            ("offline mirror", mirror_text),
            ("encoder checkpoint", f"{chosen.encoder}  ({encoder_source})"),
        ]
        width = max(len(k) for k, _ in rows)
        print("\n".join(f"{k:<{width}} : {v}" for k, v in rows))
    if chosen.name == "rehearsal":
        _announce_rehearsal(chosen)
    return session
