"""Helpers for the course *BERT and Transfer Learning*.

Every notebook starts with ``session = setup()``; lessons load data and models by hub name through
``load_dataset`` / ``load_tokenizer`` / ``load_model`` and record their headline numbers with ``record`` and what those
numbers show, per profile, with ``claim``."""

from pathlib import Path

from .claims import claim
from .profiles import COURSE_CHECKPOINT, COURSE_MLM_CHECKPOINT, PROFILES, Profile, get_profile
from .report import record
from .resources import load_dataset, load_model, load_tokenizer, register_offline_checkpoint, resolve_checkpoint
from .session import Session, setup


def _course_bert() -> tuple[Path, str]:
    """The resolver's offline provider for the course's own BERT (``course_bert.provide``: the cache, trained on
    first use). Imported when a lesson first asks for the checkpoint, not with the package: building it needs lesson
    02's pretraining loop (transformers' BERT, accelerate), which would make every ``python -m course_utils...``
    command start about twice as slowly."""
    from .course_bert import provide

    return provide()


def _english_mlm() -> tuple[Path, str]:
    """The resolver's offline provider for the course's English MLM (``english_mlm.provide``: MiniLM's body with the
    shipped head and top layers), imported on first use for the same reason."""
    from .english_mlm import provide

    return provide()


register_offline_checkpoint(COURSE_CHECKPOINT, _course_bert, "course")
register_offline_checkpoint(COURSE_MLM_CHECKPOINT, _english_mlm, "course")

__all__ = [
    "PROFILES",
    "Profile",
    "Session",
    "claim",
    "get_profile",
    "load_dataset",
    "load_model",
    "load_tokenizer",
    "record",
    "resolve_checkpoint",
    "setup",
]
