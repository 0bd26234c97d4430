"""Helpers for the course *BERT and Transfer Learning*.

Every notebook starts with ``session = setup()``; lessons load data and models by hub name through
``load_dataset`` / ``load_tokenizer`` / ``load_model`` and record their headline numbers with ``record`` and what those numbers show, per profile, with ``claim``.
"""
from . import course_bert  # registers the course's own checkpoint with the resolver
from .claims import claim
from .profiles import PROFILES, Profile, get_profile
from .resources import load_dataset, load_model, load_tokenizer, resolve_checkpoint
from .results import record
from .session import Session, setup

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
