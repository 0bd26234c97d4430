"""Claims: what a lesson says its numbers show, as an expectation per profile, checked and recorded in one call.

Every lesson uses it (lesson 01 introduces it). A claim names a measured value, a comparison and a threshold for each
profile that is expected to meet it. A lesson writes only the first three; the thresholds, the paper they come from
and what a miss means live in ``course_utils.expectations``, under the claim's name::

    claim("SST-2 validation accuracy", accuracy, ">=")     # quick >= 0.85, full >= 0.912 (expectations.py)
    claim("SST-2 accuracy", accuracy, ">=", quick=0.85, full=0.912, source="...")   # explicit, as tests do

In the running profile the claim either holds (printed, recorded), fails (recorded, then ``ClaimFailed``, an
``AssertionError``, stops the notebook like the ``assert`` it replaces), or is not expected there (recorded and
printed with the other profiles' thresholds): a rehearsal's random stand-ins are expected to give finite, shaped
numbers, not a paper's accuracy. ``every=`` sets one threshold for all profiles (a profile keyword overrides it).
The course report (``python -m course_tools.run_course``) lists every claim with its profile, value, threshold and
outcome.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from .expectations import expectation_for
from .profiles import PROFILES, active_profile
from .report import checked_claims, note_claim

_OPS: dict[str, Callable[[float, Any], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "between": lambda v, t: t[0] <= v <= t[1],
}
HELD, FAILED, NOT_EXPECTED = "held", "failed", "not expected"


class ClaimFailed(AssertionError):
    """A claim's value missed the running profile's threshold."""


@dataclass(frozen=True)
class Claim:
    """One checked claim: ``value op threshold`` in ``profile``; ``threshold`` is None where none is expected."""

    name: str
    profile: str
    value: float
    op: str
    threshold: float | tuple[float, float] | None
    outcome: str  # 'held', 'failed' or 'not expected'
    expected: dict[str, Any]  # every profile's threshold, for the report and the printed line
    source: str | None = None  # where a paper's number comes from (author, year, table)
    why: str = ""  # what the claim means, shown when it fails

    def _ipython_display_(self) -> None:
        """A cell that ends with a claim shows nothing more: ``claim`` has printed its line already."""


def _threshold(op: str, value: Any, where: str) -> float | tuple[float, float]:
    if op == "between":
        ok = (
            isinstance(value, (tuple, list))
            and len(value) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)
            and value[0] <= value[1]
        )
        if not ok:
            raise ValueError(
                f"claim: {where} for 'between' must be a pair (low, high) with low <= high; got {value!r}."
            )
        pair = (float(value[0]), float(value[1]))
        if not all(math.isfinite(v) for v in pair):
            raise ValueError(f"claim: {where} must be finite; got {value!r}. {_FINITE}")
        return pair
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or math.isnan(float(value)):
        raise ValueError(f"claim: {where} must be a number for {op!r}; got {value!r}.")
    if not math.isfinite(float(value)):
        raise ValueError(f"claim: {where} must be finite; got {value!r}. {_FINITE}")
    return float(value)


_FINITE = (
    "A claim with an infinite bound holds for every finite value, so no run without the effect could fail it; to "
    "check that a loss did not diverge, assert math.isfinite(loss) instead."
)


def _shown(threshold: Any) -> str:
    if isinstance(threshold, tuple):
        return f"[{threshold[0]:.4g}, {threshold[1]:.4g}]"
    return f"{threshold:.4g}"


def claim(
    name: str,
    value: Any,
    op: str,
    *,
    every: Any = None,
    source: str | None = None,
    source_for: tuple[str, ...] | None = None,
    why: str = "",
    **thresholds: Any,
) -> Claim:
    """Check ``value op threshold`` for the running profile; record and print the outcome; return the ``Claim``.

    ``op`` is one of ``>=``, ``>``, ``<=``, ``<`` or ``between`` (threshold ``(low, high)``, both included).
    Thresholds are keyword arguments named after profiles (``quick=``, ``full=``, ``rehearsal=``); ``every=`` gives
    all profiles one threshold. Without any, the lesson's expectation is looked up by ``name`` in
    ``course_utils.expectations`` (thresholds, source and meaning), so that a lesson's cell shows only what it
    measured: ``claim("SST-2 validation accuracy", accuracy, ">=")``. ``source_for`` names the profiles whose
    threshold the ``source`` gives (default: all); elsewhere the source is neither printed nor recorded. A profile
    without a threshold records the value as 'not expected'. Thresholds are finite (to check that a loss stayed
    finite, ``assert`` it). A value that is not a finite number (a NaN loss) fails wherever a threshold is expected.
    Raises ``ClaimFailed`` when the claim fails in the running profile, after recording it.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"claim needs a name that says what was measured, e.g. 'SST-2 accuracy'; got {name!r}.")
    if op not in _OPS:
        raise ValueError(f"claim {name!r}: unknown comparison {op!r}; accepted: {', '.join(_OPS)}.")
    if every is None and not thresholds:
        expected_here = expectation_for(name)  # KeyError saying where entries live, if the claim has none
        if expected_here.op != op:
            raise ValueError(
                f"claim {name!r} compares with {op!r}, but its entry in course_utils/expectations.py says "
                f"{expected_here.op!r}: one of them is wrong."
            )
        every, thresholds = expected_here.every, dict(expected_here.thresholds)
        source = source or expected_here.source
        source_for = source_for if source_for is not None else expected_here.source_for
        why = why or expected_here.why
    unknown = sorted(set(thresholds) - set(PROFILES))
    if unknown:
        raise ValueError(
            f"claim {name!r}: no profile called {', '.join(map(repr, unknown))}; thresholds are named "
            f"after profiles: {', '.join(PROFILES)} (or every= for all of them)."
        )
    expected: dict[str, Any] = {}
    for profile in PROFILES:
        given = thresholds.get(profile, every)
        if given is not None:
            expected[profile] = _threshold(op, given, f"the {profile} threshold")
    if not expected:
        raise ValueError(
            f"claim {name!r} expects nothing in any profile; give at least one threshold "
            f"({', '.join(f'{p}=' for p in PROFILES)} or every=)."
        )
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()  # numpy and torch scalars
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"claim {name!r}: the value must be a number; got {type(value).__name__} {value!r}.")
    value = float(value)
    profile = active_profile()
    threshold = expected.get(profile)
    if source_for is not None:
        unknown = sorted(set(source_for) - set(PROFILES))
        if unknown:
            raise ValueError(f"claim {name!r}: source_for names no profile {', '.join(map(repr, unknown))}.")
        if profile not in source_for:
            source = None  # the paper gives another profile's threshold, not this one's
    if threshold is None:
        outcome = NOT_EXPECTED
    else:
        outcome = HELD if math.isfinite(value) and _OPS[op](value, threshold) else FAILED
    result = Claim(
        name,
        profile,
        value,
        op,
        threshold,
        outcome,
        {p: list(t) if isinstance(t, tuple) else t for p, t in expected.items()},
        source,
        why,
    )
    note_claim(asdict(result))
    elsewhere = ", ".join(f"{p} {op} {_shown(t)}" for p, t in expected.items() if p != profile)
    cited = f"  [{source}]" if source else ""
    if outcome == HELD:
        print(f"claim held ({profile}): {name} = {value:.4g} {op} {_shown(threshold)}{cited}")
    elif outcome == NOT_EXPECTED:
        print(f"claim not expected in the {profile} profile: {name} = {value:.4g} (expected elsewhere: {elsewhere})")
    else:
        raise ClaimFailed(
            f"claim failed ({profile}): {name} = {value:.4g}, expected {op} {_shown(threshold)}. {why}{cited}".strip()
        )
    return result


def claims() -> list[dict[str, Any]]:
    """Every claim checked so far in this process, as plain dicts (the fields of ``Claim``)."""
    return checked_claims()


def tally(claims_: list[dict[str, Any]]) -> dict[str, int]:
    """How many claims held, failed and were not expected."""
    return {k: sum(c["outcome"] == k for c in claims_) for k in (HELD, FAILED, NOT_EXPECTED)}
