"""Quiet mode (``COURSE_QUIET=1``): tests and the headless course run keep progress bars and warnings off stderr.

Every lesson is quiet through ``setup``; 03a, 04 and 07 also ask ``is_quiet`` to skip a progress bar of their own."""

from __future__ import annotations

import logging
import os
import warnings

from .flags import env_flag

QUIET_ENV = "COURSE_QUIET"


def is_quiet() -> bool:
    """True under tests and the headless course run."""
    return env_flag(QUIET_ENV)


def quiet_libraries() -> None:
    """Progress bars and library warnings off (idempotent)."""
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore")
    # imported only now, after the switches above: some libraries read them once, when first imported
    import datasets
    import transformers

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)


def quiet_if_asked() -> None:
    """Apply quiet mode when ``COURSE_QUIET`` asks for it."""
    if is_quiet():
        quiet_libraries()
