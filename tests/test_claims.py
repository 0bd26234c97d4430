"""Claims: one call records what a lesson's number shows, per profile, and checks it in the running profile."""

import json
import math

import pytest

from course_utils import profiles, report
from course_utils.claims import ClaimFailed, claim, tally
from course_utils.profiles import use_profile


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(report, "_claims", [])
    monkeypatch.setattr(profiles, "_active", {})
    monkeypatch.setenv(report.RESULTS_ENV, str(tmp_path / "report.json"))
    use_profile("quick")


def test_a_claim_holds_fails_or_is_not_expected_per_profile(capsys, tmp_path):
    held = claim("SST-2 accuracy", 0.86, ">=", quick=0.85, full=0.912, source="Devlin et al. (2019)")
    assert held.outcome == "held" and held.threshold == 0.85 and held.expected == {"quick": 0.85, "full": 0.912}
    assert "claim held (quick): SST-2 accuracy = 0.86 >= 0.85" in capsys.readouterr().out
    use_profile("rehearsal")
    idle = claim("SST-2 accuracy", 0.51, ">=", quick=0.85, full=0.912)
    assert idle.outcome == "not expected" and idle.threshold is None
    assert "expected elsewhere: quick >= 0.85, full >= 0.912" in capsys.readouterr().out
    use_profile("full")
    with pytest.raises(
        ClaimFailed,
        match=r"claim failed \(full\): SST-2 accuracy = 0.9, expected >= 0.912. "
        r"the paper.*\[Devlin",
    ):
        claim(
            "SST-2 accuracy", 0.9, ">=", quick=0.85, full=0.912, why="the paper's number", source="Devlin et al. (2019)"
        )
    written = json.loads((tmp_path / "report.json").read_text())["claims"]  # a failed claim is recorded first
    assert [c["outcome"] for c in written] == ["held", "not expected", "failed"]
    assert tally(written) == {"held": 1, "failed": 1, "not expected": 1}


def test_every_sets_all_profiles_and_a_profile_keyword_overrides_it():
    c = claim("loss falls", 0.3, ">", every=0.0, quick=0.2)
    assert c.expected == {"quick": 0.2, "full": 0.0, "rehearsal": 0.0} and c.outcome == "held"
    assert claim("in range", 0.5, "between", every=(0.4, 0.6)).outcome == "held"


def test_a_non_finite_value_fails_wherever_something_is_expected():
    with pytest.raises(AssertionError, match="loss = nan"):
        claim("loss", math.nan, "<", every=10.0)
    import torch

    assert claim("loss", torch.tensor(1.5), "<", every=2).value == 1.5  # torch and numpy scalars are numbers


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(name="", value=1, op=">="), "needs a name"),
        (dict(name="x", value=1, op="=="), r"unknown comparison '=='; accepted: >=, >, <=, <, between"),
        (dict(name="x", value=1, op=">=", fast=1), r"no profile called 'fast'.*quick, full, rehearsal"),
        (dict(name="x", value=1, op=">=", quick=None), "expects nothing in any profile"),
        (dict(name="x", value=1, op="between", quick=(2, 1)), r"pair \(low, high\) with low <= high"),
        (dict(name="x", value=1, op=">=", quick="high"), "must be a number"),
        (dict(name="loss", value=1, op="<", every=math.inf), r"must be finite.*assert math.isfinite"),
        (dict(name="x", value=1, op="between", quick=(0, math.inf)), "must be finite"),
        (dict(name="x", value=1, op=">=", quick=0, source="A (2020)", source_for=("fast",)), "no profile 'fast'"),
    ],
)
def test_bad_claims_are_refused_with_what_is_accepted(kwargs, message):
    with pytest.raises(ValueError, match=message):
        claim(**kwargs)
    assert report.checked_claims() == []


def test_a_value_that_is_not_a_number_is_refused():
    with pytest.raises(TypeError, match="the value must be a number; got str"):
        claim("x", "0.9", ">=", quick=0.5)


def test_mixed_precision_follows_the_running_profile():
    from course_utils.training_loop import cpu_computes_bf16
    from course_utils.training_loop import precision_mode as mode

    assert mode("cpu") == "no"  # quick: fp32
    use_profile("rehearsal")
    assert mode("cpu") == ("bf16" if cpu_computes_bf16() else "no")  # emulated bf16 would only be slower
    assert mode("cpu", enabled=True) == "bf16" and mode("cpu", enabled=False) == "no"


def test_a_source_is_printed_and_recorded_only_where_it_gives_the_threshold(capsys):
    cited = claim("accuracy", 0.9, ">=", quick=0.85, full=0.912, source="A (2020): 92.7", source_for=("full",))
    assert cited.source is None and "[A (2020)" not in capsys.readouterr().out  # quick's 0.85 is not the paper's
    everywhere = claim("speed-up", 1.6, ">=", every=1.5, source="B (2019): 60 % faster")
    assert everywhere.source == "B (2019): 60 % faster" and "[B (2019): 60 % faster]" in capsys.readouterr().out
