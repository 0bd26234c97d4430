"""``python -m course_tools.bench timeline``: where the time of the last `make test` went, lane by lane.

The Makefile's ``test`` target has every test phase appended to ``build/test-timeline.jsonl`` (``conftest.py``): its
lane (``main`` for the lessons run alone on every core first, ``gw0``/``gw1`` for the lanes), its unit of work (a
notebook, a test module, one rehearsal), its seconds and when it ended. This reads it back: each lane's span and busy
time, how long before the last lane it ended (for a lane, time it stood idle; ``main`` runs before the lanes), each
tier's total and the longest units.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

TIMELINE = Path("build") / "test-timeline.jsonl"


def tier_of(unit: str) -> str:
    """A unit of work -> its tier: the notebooks under nbval, the rehearsal, or the unit tests."""
    if unit.endswith(".ipynb"):
        return "notebooks (nbval)"
    if "test_rehearsal.py" in unit:
        return "rehearsal"
    return "unit tests"


def summarise(lines: list[dict]) -> dict:
    """Timeline lines -> {"lanes": {lane: {start, end, busy}}, "tiers": {tier: seconds}, "units": {unit: seconds}}."""
    lanes: dict[str, dict[str, float]] = {}
    tiers: dict[str, float] = defaultdict(float)
    units: dict[str, float] = defaultdict(float)
    for line in lines:
        lane = lanes.setdefault(line["lane"], {"start": float("inf"), "end": 0.0, "busy": 0.0})
        lane["start"] = min(lane["start"], line["end"] - line["seconds"])
        lane["end"] = max(lane["end"], line["end"])
        lane["busy"] += line["seconds"]
        tiers[tier_of(line["unit"])] += line["seconds"]
        units[line["unit"]] += line["seconds"]
    return {"lanes": lanes, "tiers": dict(tiers), "units": dict(units)}


def report(path: Path = TIMELINE, top: int = 15) -> dict:
    """Print the summary of ``path`` (see the module's docstring) and return it."""
    if not path.is_file():
        raise FileNotFoundError(f"no timeline at {path}: `make test` writes it (or set $COURSE_TEST_TIMELINE)")
    lines = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
    if not lines:
        raise ValueError(f"{path} is empty: no test ran with $COURSE_TEST_TIMELINE set")
    found = summarise(lines)
    lanes = found["lanes"]
    last = max(lane["end"] for lane in lanes.values())
    print(f"{'lane':<6} {'span s':>8} {'busy s':>8} {'ended before last s':>19}")
    for name, lane in sorted(lanes.items()):
        print(f"{name:<6} {lane['end'] - lane['start']:8.0f} {lane['busy']:8.0f} {last - lane['end']:19.0f}")
    print("\ntier                 seconds (summed over lanes)")
    for tier, seconds in sorted(found["tiers"].items(), key=lambda kv: -kv[1]):
        print(f"{tier:<20} {seconds:8.0f}")
    print(f"\nthe {top} longest units")
    for unit, seconds in sorted(found["units"].items(), key=lambda kv: -kv[1])[:top]:
        print(f"{seconds:8.0f}  {unit}")
    return found
