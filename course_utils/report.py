"""Headline results a notebook claims, recorded so that the course report can read them.

A notebook calls ``record(masked_fraction=0.151)``; the value is kept in memory (quietly: the lesson has already
said the number in its own words) and, when the notebook runs
under ``python -m course_tools.run_course`` (which sets ``$COURSE_RESULTS_FILE``), written to that JSON file. The file
is rewritten whole through a temporary file and an atomic rename, so a crash never leaves it half-written.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from typing import Any

from .atomic import atomic_write_text

RESULTS_ENV = "COURSE_RESULTS_FILE"

_results: dict[str, Any] = {}
_sources: list[dict[str, str]] = []
_claims: list[dict[str, Any]] = []


def _plain(value: Any, key: str) -> Any:
    """Turn numpy/torch scalars and arrays into JSON values; refuse what JSON cannot hold."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy and torch, scalars and arrays
        value = value.tolist()
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"record({key}=...): {value} is not a finite number; record finite numbers only.")
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, key) for k, v in value.items()}
    raise TypeError(
        f"record({key}=...): cannot record a {type(value).__name__}; accepted: numbers, strings, booleans, None, "
        "and lists or dicts of those (numpy/torch scalars and arrays are converted)."
    )


def _write() -> None:
    path = os.environ.get(RESULTS_ENV)
    if not path:
        return
    atomic_write_text(path, json.dumps({"results": _results, "sources": _sources, "claims": _claims}, indent=2))


def record(**values: Any) -> None:
    """Record headline results by name, e.g. ``record(masked_fraction=0.151, model="bert-base-uncased")``.

    Prints nothing and returns nothing, so that a notebook shows each number once, where it explains it (a returned
    dict would be displayed whole as a cell's last line); ``recorded()`` gives everything recorded so far.
    """
    if not values:
        raise ValueError("record() needs at least one name=value pair, e.g. record(masked_fraction=0.151).")
    plain = {key: _plain(value, key) for key, value in values.items()}  # validate all before storing any
    _results.update(plain)
    _write()


def note_source(kind: str, name: str, source: str, location: str) -> None:
    """Remember where a dataset or checkpoint came from (the resolver calls this)."""
    entry = {"kind": kind, "name": name, "source": source, "location": location}
    if entry not in _sources:
        _sources.append(entry)
        _write()


def note_claim(checked: dict[str, Any]) -> None:
    """Keep a checked claim for the course report (``course_utils.claims.claim`` calls this)."""
    _claims.append(dict(checked))
    _write()


def recorded() -> dict[str, Any]:
    """Everything recorded so far in this process."""
    return dict(_results)


def checked_claims() -> list[dict[str, Any]]:
    """Every claim checked in this process (``course_utils.claims``)."""
    return [dict(c) for c in _claims]


def sources() -> list[dict[str, str]]:
    """Every dataset and checkpoint the resolver handed out in this process, with where it came from."""
    return list(_sources)
