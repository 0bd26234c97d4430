"""Every claim a lesson makes has its expectation in course_utils.expectations, and every expectation a claim."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest

from course_utils import claims, expectations, report
from course_utils.expectations import LESSONS, expect, expectation_for
from course_utils.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _parsed(source: str) -> ast.Module | None:
    # shell and magic lines (the install cell) are not Python
    lines = ["#" + line if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _name(node: ast.expr) -> str:
    """A claim's name as written: a string, or an f-string as its template ({placeholder} for each field)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    assert isinstance(node, ast.JoinedStr), f"a claim's name is a string or an f-string, not {ast.dump(node)}"
    return "".join(
        v.value.replace("{", "{{").replace("}", "}}") if isinstance(v, ast.Constant) else "{}" for v in node.values
    )


def lesson_claims() -> list[tuple[str, str, ast.Call]]:
    """(lesson, name template with bare {} fields, call) for every claim(...) in every notebook."""
    found = []
    for path in NOTEBOOKS:
        lesson = path.name.split("_")[0]
        for cell in json.loads(path.read_text())["cells"]:
            tree = _parsed("".join(cell["source"])) if cell["cell_type"] == "code" else None
            for node in ast.walk(tree) if tree else []:
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "claim":
                    found.append((lesson, _name(node.args[0]), node))
    return found


def _bare(template: str) -> str:
    return re.sub(r"\{\w+\}", "{}", template)


def test_every_claim_in_a_lesson_names_its_expectation_and_shows_no_thresholds():
    problems = []
    for lesson, name, call in lesson_claims():
        kwargs = [k.arg for k in call.keywords]
        if len(call.args) != 3 or kwargs:
            shown = kwargs or len(call.args)
            problems.append(f"{lesson}: claim {name!r} should read claim(name, value, op); it has {shown}")
        entries = {_bare(n): e for n, e in LESSONS.get(lesson, {}).items()}
        if name not in entries:
            problems.append(f"{lesson}: claim {name!r} has no entry under {lesson!r} in course_utils/expectations.py")
        elif (
            "{}" in name.replace("{{", "").replace("}}", "")
            and expectation_for(name.replace("{}", "x 1").replace("{{", "{").replace("}}", "}")).thresholds
            != entries[name].thresholds
        ):
            problems.append(f"{lesson}: claim {name!r}, filled in at run time, finds another lesson's entry")
        elif isinstance(call.args[2], ast.Constant) and entries[name].op != call.args[2].value:
            problems.append(
                f"{lesson}: claim {name!r} compares with {call.args[2].value!r}, its entry with {entries[name].op!r}"
            )
    assert problems == []


def test_every_expectation_is_claimed_by_its_lesson():
    claimed = {(lesson, name) for lesson, name, _ in lesson_claims()}
    unused = [
        (lesson, name)
        for lesson, entries in LESSONS.items()
        for name in entries
        if (lesson, _bare(name)) not in claimed
    ]
    assert unused == []


def test_every_expectation_has_a_finite_threshold_a_profile_accepts():
    for lesson, entries in LESSONS.items():
        for name, entry in entries.items():
            assert entry.op in claims._OPS, (lesson, name)
            assert set(entry.thresholds) <= set(PROFILES), (lesson, name, entry.thresholds)
            given = [entry.every, *entry.thresholds.values()]
            assert any(t is not None for t in given), (lesson, name)
            for t in given:
                if t is not None:
                    claims._threshold(entry.op, t, f"{lesson}: {name}")  # raises on a malformed threshold
            assert entry.why, f"{lesson}: {name} needs a why (shown when the claim fails)"
            if entry.source_for is not None:  # a source said to give a threshold gives one that exists
                assert entry.source and set(entry.source_for) <= set(PROFILES), (lesson, name)
                assert all(entry.thresholds.get(p, entry.every) is not None for p in entry.source_for), (lesson, name)


def test_names_are_unique_across_lessons_unless_they_expect_the_same():
    seen: dict[str, tuple[str, object]] = {}
    for lesson, entries in LESSONS.items():
        for name, entry in entries.items():
            if name in seen:
                assert seen[name][1] == entry, f"{name!r} in {seen[name][0]} and {lesson} expects differently"
            seen.setdefault(name, (lesson, entry))


@pytest.fixture
def fresh_report(monkeypatch):
    monkeypatch.setattr(report, "_claims", [])
    monkeypatch.delenv(report.RESULTS_ENV, raising=False)


def test_a_claim_without_thresholds_uses_its_entry_and_fills_in_placeholders(monkeypatch, fresh_report, capsys):
    monkeypatch.setattr(
        expectations,
        "LESSONS",
        {
            "99": {
                "plain": expect(">=", quick=0.5, full=0.9, source="A (2020)", why="should be high"),
                "{task} loss": expect("<", every=10.0, why="{task} diverged"),
            }
        },
    )
    expectations._templates.cache_clear()
    try:
        held = claims.claim("plain", 0.6, ">=")
        assert (held.threshold, held.source, held.expected) == (0.5, "A (2020)", {"quick": 0.5, "full": 0.9})
        assert "claim held (quick): plain = 0.6 >= 0.5  [A (2020)]" in capsys.readouterr().out
        assert expectation_for("mrpc loss").why == "mrpc diverged"
        with pytest.raises(claims.ClaimFailed, match="rte diverged"):
            claims.claim("rte loss", math.nan, "<")
        with pytest.raises(ValueError, match="says '>='"):
            claims.claim("plain", 0.6, "<")
        with pytest.raises(KeyError, match="course_utils/expectations.py"):
            claims.claim("nobody wrote this down", 0.6, ">=")
        assert claims.claim("explicit", 0.6, ">=", every=0.1).threshold == 0.1  # explicit thresholds still work
    finally:
        expectations._templates.cache_clear()
