"""The one call at the top of every notebook: seed, pick device and profile, quiet the noise, say what is in use."""

from __future__ import annotations

import os
import platform
import random
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import torch

from .paths import describe_path
from .profiles import SET_ENV, Profile, get_profile, use_profile
from .quiet import is_quiet, quiet_if_asked
from .registry import SHIPPED_ROOT
from .report import record
from .resources import COURSE_PREFIX, hub_status, mirror_dir, resolve_checkpoint


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


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _announce_rehearsal(profile: Profile) -> None:
    """Print and record that this run is a rehearsal, and which random-weight stand-ins replace the profile's
    checkpoints (the resolver knows a stand-in by the marker beside its config)."""
    found = {}
    # the course's own checkpoints are never stand-ins; resolving one here could start its build inside setup()
    for name in (n for n in profile.checkpoints() if not n.startswith(COURSE_PREFIX)):
        try:
            found[name] = resolve_checkpoint(name)
        except FileNotFoundError:
            continue
    standins = {name: c.detail for name, c in found.items() if c.source == "stand-in"}
    print(
        "\nREHEARSAL of the full profile: its code path with steps and examples capped; the checkpoints below are "
        "random-weight stand-ins, so no number here is a result of the real models."
    )
    for name, where in standins.items():
        print(f"  {name}: {where}")
    record(rehearsal=True, standins=sorted(standins))


def setup(seed: int = 0, profile: str | None = None, verbose: bool = False) -> Session:
    """Seed everything, choose device and profile, quiet libraries under tests, say what is in use (lesson 01).

    ``profile`` overrides ``$COURSE_PROFILE``; with neither, it is 'full' on a CUDA machine and 'quick' otherwise.
    Prints three lines (profile and device, where data comes from, the encoder); ``verbose=True`` adds the versions
    and paths behind them.
    """
    chosen = get_profile(profile)
    use_profile(chosen.name)  # the profile every claim of this notebook is checked in
    seed_everything(seed)
    quiet_if_asked()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    device = pick_device()
    _, why = hub_status("dataset")
    mirror = mirror_dir()
    mirror_text = (
        f"{describe_path(mirror)} (stands in for the hub where there is no internet)"
        if mirror
        else "none (not needed where the hub is reachable)"
    )
    session = Session(chosen, device, seed, why, mirror_text, is_quiet())
    try:  # the resolver's own answer, so the summary can never disagree with what load_model will do
        encoder_source = resolve_checkpoint(chosen.encoder).detail
    except FileNotFoundError:
        encoder_source = "NOT AVAILABLE here: load_model will explain how to provide it"
    threads = torch.cuda.get_device_name(0) if device.type == "cuda" else f"{torch.get_num_threads()} CPU threads"
    fields = os.environ.get(SET_ENV, "").strip()
    print(
        f"{chosen.name} profile on {device} ({threads}), seed {seed}"
        + (f"; recipe fields set: {fields}" if fields else "")
    )
    print(
        f"data: shipped with the course, else the hub ({why.removeprefix('hub ')})"
        + (", else a local copy of its datasets (setup(verbose=True) says where)" if mirror else "")
    )
    print(f"encoder: {chosen.encoder} ({encoder_source})")
    if verbose:
        rows = [
            ("COURSE_PROFILE", os.environ.get("COURSE_PROFILE", "unset")),
            ("python", platform.python_version()),
            (
                "torch / transformers / datasets",
                f"{torch.__version__} / {_version('transformers')} / {_version('datasets')}",
            ),
            ("course data", f"{describe_path(SHIPPED_ROOT)} (the corpora the course ships)"),
            ("offline mirror", mirror_text),
        ]
        width = max(len(k) for k, _ in rows)
        print("\n".join(f"{k:<{width}} : {v}" for k, v in rows))
    if chosen.name == "rehearsal":
        _announce_rehearsal(chosen)
    return session
