"""What the two run profiles mean, in one place.

``quick`` is the offline CPU run (about two minutes a notebook on a 2-core laptop, small real models, real data
subsets); ``full`` is the lecture-scale GPU run with the hub checkpoints. Notebooks read every size from here and
never hard-code one.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

PROFILE_ENV = "COURSE_PROFILE"


@dataclass(frozen=True)
class Profile:
    """Checkpoints, subset sizes and budgets of one profile."""

    name: str
    encoder: str                   # pretrained BERT-architecture encoder for the tokenizer/encoder lessons
    masking_examples: int          # sentences used to measure realised masking rates (notebook 01)
    train_examples: int | None     # training subset per task (None: the whole split)
    eval_examples: int | None      # evaluation subset per task (None: the whole split)
    batch_size: int
    max_seq_length: int
    mixed_precision: bool
    seconds_budget: float | None   # per-notebook wall-clock target; checked by benchmarks/, reported by run_course
    peak_rss_mb_budget: float | None


PROFILES: dict[str, Profile] = {
    "quick": Profile(
        name="quick",
        encoder="sentence-transformers/all-MiniLM-L6-v2",
        masking_examples=4000,
        train_examples=2000,
        eval_examples=500,
        batch_size=32,
        max_seq_length=128,
        mixed_precision=False,
        seconds_budget=120.0,
        peak_rss_mb_budget=3072.0,
    ),
    "full": Profile(
        name="full",
        encoder="bert-base-uncased",
        masking_examples=20000,
        train_examples=None,
        eval_examples=None,
        batch_size=32,
        max_seq_length=128,
        mixed_precision=True,
        seconds_budget=None,
        peak_rss_mb_budget=None,
    ),
}


def default_profile_name() -> str:
    """``full`` when a CUDA device is present, else ``quick``."""
    import torch

    return "full" if torch.cuda.is_available() else "quick"


def get_profile(name: str | None = None) -> Profile:
    """Return the profile called ``name``; ``None`` reads ``$COURSE_PROFILE``, then falls back to the default."""
    chosen = name if name is not None else os.environ.get(PROFILE_ENV) or default_profile_name()
    key = chosen.strip().lower()
    if key not in PROFILES:
        source = "argument" if name is not None else f"${PROFILE_ENV}"
        raise ValueError(
            f"Unknown course profile {chosen!r} (from the {source}). Accepted: {', '.join(sorted(PROFILES))}. "
            f"Leave {PROFILE_ENV} unset to get 'full' on a CUDA machine and 'quick' otherwise."
        )
    return PROFILES[key]
