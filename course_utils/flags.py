"""Yes/no switches read from the environment (``COURSE_QUIET``, ``HF_HUB_OFFLINE``, ...), read one way everywhere."""

from __future__ import annotations

import os

TRUE = frozenset({"1", "true", "yes", "on"})  # case-insensitive; anything else (unset included) is off


def env_flag(name: str) -> bool:
    """True when the environment variable ``name`` is set to 1, true, yes or on (any case, spaces ignored)."""
    return os.environ.get(name, "").strip().lower() in TRUE
