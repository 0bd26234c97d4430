import pytest

from course_utils.profiles import PROFILES, get_profile


def test_both_profiles_are_defined_with_their_checkpoints():
    assert set(PROFILES) == {"quick", "full"}
    assert get_profile("quick").encoder == "sentence-transformers/all-MiniLM-L6-v2"
    assert get_profile("full").encoder == "bert-base-uncased"
    assert get_profile("quick").seconds_budget == 120 and get_profile("quick").peak_rss_mb_budget <= 3072


def test_environment_variable_and_case(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "FULL")
    assert get_profile().name == "full"
    assert get_profile("quick").name == "quick"  # an explicit argument wins


@pytest.mark.parametrize("cuda, expected", [(True, "full"), (False, "quick")])
def test_default_follows_the_device(monkeypatch, cuda, expected):
    import torch

    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    assert get_profile().name == expected


def test_unknown_profile_is_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"Unknown course profile 'fast'.*Accepted: full, quick"):
        get_profile("fast")
    monkeypatch.setenv("COURSE_PROFILE", "medium")
    with pytest.raises(ValueError, match=r"'medium' \(from the \$COURSE_PROFILE\)"):
        get_profile()
