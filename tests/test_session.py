import pytest
import torch

from course_utils import setup


def test_setup_seeds_and_summarises(capsys):
    s = setup(seed=7)
    a = torch.rand(3)
    setup(seed=7, verbose=False)
    assert torch.equal(a, torch.rand(3))
    out = capsys.readouterr().out
    for field in (
        "profile",
        "device",
        "torch / transformers / datasets",
        "course data",
        "hub",
        "offline mirror",
        "encoder checkpoint",
    ):
        assert field in out
    from course_utils.session import pick_device

    assert s.profile.name == "quick" and s.device == pick_device() and s.quiet


def test_bad_seed_is_refused():
    import pytest

    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        setup(seed=-1)


def test_device_names_say_what_ran():
    from course_utils.efficiency import device_name

    name = device_name("cpu")
    assert name.startswith("cpu (") and name.endswith(f"{torch.get_num_threads()} threads)")
    assert device_name(torch.device("meta")) == "meta"


@pytest.mark.parametrize("cuda, mps, expected", [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")])
def test_the_device_is_the_fastest_one_present(monkeypatch, cuda, mps, expected):
    from course_utils.session import pick_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert pick_device().type == expected


def test_the_setup_line_says_which_recipe_fields_were_set(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_SET", "finetuning.sst2.lr=3e-5")
    s = setup(seed=0)
    assert s.profile.finetune("sst2").lr == 3e-5
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("recipe fields set"))
    assert line.endswith(": finetuning.sst2.lr=3e-5")
