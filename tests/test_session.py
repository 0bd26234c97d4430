import pytest
import torch

from course_utils import setup


def test_setup_seeds_and_says_what_is_in_use_in_three_lines(capsys):
    s = setup(seed=7)
    a = torch.rand(3)
    short = capsys.readouterr().out.splitlines()
    setup(seed=7, verbose=True)
    assert torch.equal(a, torch.rand(3))
    assert len(short) == 3, short  # profile and device, where data comes from, the encoder
    assert short[0].startswith("quick profile on cpu (") and short[0].endswith("seed 7")
    assert short[1].startswith("data: shipped with the course, else the hub (")
    assert short[2].startswith(f"encoder: {s.profile.encoder} (")
    full = capsys.readouterr().out
    for field in ("torch / transformers / datasets", "course data", "offline mirror", "COURSE_PROFILE"):
        assert field in full and field not in "\n".join(short)
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
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("; recipe fields set: finetuning.sst2.lr=3e-5")
