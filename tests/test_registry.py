"""The registry of datasets: everything the course loads is in it, shipped data is whole, hub data is declared.

These are the checks that keep the course running for a student with a clone and the internet, and no mirror.
"""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

import course_utils.resources as res
from course_utils import load_dataset, registry
from course_utils.adaptation import TASKS
from course_utils.course_bert import BOOKS
from course_utils.glue import GLUE_HUB
from course_utils.profiles import PROFILES

ROOT = Path(__file__).resolve().parent.parent
LOAD_RE = re.compile(r"load_dataset\(\s*[\"']([^\"']+)[\"']")
BUDGET_MB = 40  # the shipped datasets and the two shipped models (issue 38)


def notebook_code(path: Path) -> str:
    return "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def names_used() -> dict[str, set[str]]:
    """Every dataset name the notebooks and the package load -> where it is loaded."""
    used: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for name in LOAD_RE.findall(notebook_code(path)):
            used.setdefault(name, set()).add(path.name)
    for path in sorted((ROOT / "course_utils").rglob("*.py")):
        for name in LOAD_RE.findall(path.read_text(encoding="utf-8")):
            used.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    for name, where in [(BOOKS[0], "course_bert.BOOKS"), (TASKS, "adaptation.TASKS"), (GLUE_HUB, "glue.GLUE_HUB")]:
        used.setdefault(name, set()).add(where)
    for profile in PROFILES.values():
        if profile.seq2seq is not None and profile.seq2seq.news is not None:
            used.setdefault(profile.seq2seq.news.dataset, set()).add(f"profile {profile.name}: news")
    return used


def test_every_dataset_the_course_loads_is_in_the_registry():
    used = names_used()
    assert len(used) >= 10  # the scan found the course's loads
    unknown = {name: where for name, where in used.items() if registry.entry(name) is None}
    assert not unknown, f"not in course_utils.registry: {unknown}"


def test_each_lesson_lists_the_datasets_it_loads():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        lesson = path.name.split("_", 1)[0]
        for name in LOAD_RE.findall(notebook_code(path)):
            assert lesson in registry.entry(name).lessons, f"{path.name} loads {name} but the registry omits {lesson}"


def test_each_entry_is_shipped_and_whole_or_a_declared_hub_source():
    for entry in registry.DATASETS:
        assert entry.source in ("course", "hub") and entry.configs and entry.licence and entry.why
        if entry.shipped:
            folder = registry.verify_shipped(entry)  # every file present, every checksum right
            assert res.mirror_configs(folder) == list(entry.configs)
            assert entry.hub is None and entry.revision is None
        else:
            assert entry.hub and "/" in entry.hub and not registry.shipped_folder(entry).exists()
    # nothing the course may not redistribute is shipped
    assert not registry.entry("eriktks/conll2003").shipped
    assert registry.entry("eriktks/conll2003").revision == "refs/convert/parquet"


def test_shipped_data_fits_its_budget():
    size = sum(p.stat().st_size for p in registry.SHIPPED_ROOT.rglob("*") if p.is_file())
    assert size <= BUDGET_MB * 1e6, f"course_utils/data holds {size / 1e6:.1f} MB (budget {BUDGET_MB} MB)"


def test_notebooks_name_no_offline_only_checkpoint():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = notebook_code(path)
        assert not re.search(r"[\"']course/", code), f"{path.name} names a course/ checkpoint instead of its profile's"
        assert "COURSE_BERT" not in code and "shared/data" not in code


def test_loading_an_upstream_hub_name_uses_the_course_copy(capsys):
    ds = load_dataset("universal-dependencies/universal_dependencies", "en_ewt", split="validation")
    assert ds.num_rows == 2001
    assert "universal_dependencies (en_ewt) <- the course's copy" in capsys.readouterr().out


@pytest.fixture
def shipped_copy(monkeypatch, tmp_path):
    """A copy of the shipped lm_diagnostics that a test may damage; loading datasets from it must never start."""
    root = tmp_path / "data"
    shutil.copytree(registry.SHIPPED_ROOT / "lm_diagnostics", root / "lm_diagnostics")
    monkeypatch.setattr(registry, "SHIPPED_ROOT", root)
    import datasets

    def must_not_load(*args, **kwargs):
        raise AssertionError("datasets.load_dataset ran on damaged data (it would write a cache)")

    monkeypatch.setattr(datasets, "load_dataset", must_not_load)
    return root / "lm_diagnostics"


def test_a_damaged_shipped_file_is_named_with_how_to_restore_it(shipped_copy):
    victim = shipped_copy / "role_88" / "test-00000-of-00001.parquet"
    data = bytearray(victim.read_bytes())
    data[100] ^= 0xFF
    victim.write_bytes(bytes(data))
    with pytest.raises(
        registry.ShippedDataError,
        match=r"is damaged: .*role_88/test-00000-of-00001.parquet has sha256"
        r".*To restore it",
    ):
        load_dataset("lm_diagnostics", "role_88")


def test_a_missing_shipped_file_is_named_with_how_to_restore_it(shipped_copy):
    (shipped_copy / "neg_136_simp" / "test-00000-of-00001.parquet").unlink()
    with pytest.raises(
        FileNotFoundError,
        match=r"incomplete: .*neg_136_simp/test-00000-of-00001.parquet is missing"
        r".*(git checkout|reinstall)",
    ):
        load_dataset("lm_diagnostics", "neg_136_simp")
    shutil.rmtree(shipped_copy)
    with pytest.raises(FileNotFoundError, match="copy of 'lm_diagnostics' is missing"):
        load_dataset("lm_diagnostics", "neg_136_simp")


def test_an_unknown_config_of_a_shipped_dataset_lists_the_configs():
    with pytest.raises(ValueError, match="has no config 'role_99'.*neg_136_simp, neg_136_nat, role_88"):
        load_dataset("lm_diagnostics", "role_99")


def test_hub_sources_are_asked_for_as_the_registry_says(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(res, "_probe", lambda endpoint, timeout: None)
    calls = []

    def fake_hub(path, name=None, split=None, **kwargs):
        calls.append((path, name, split, kwargs))
        return "from the hub"

    import datasets

    monkeypatch.setattr(datasets, "load_dataset", fake_hub)
    assert load_dataset("eriktks/conll2003", "conll2003", split="train") == "from the hub"
    assert load_dataset("conll2003") == "from the hub"  # folder name, single config
    assert load_dataset("Yale-LILY/aeslc") == "from the hub"
    # CoNLL-2003 from the hub's parquet export (main has a loading script), its config as a folder
    assert calls[0] == (
        "eriktks/conll2003",
        None,
        "train",
        {"data_dir": "conll2003", "revision": "refs/convert/parquet"},
    )
    assert calls[1][3] == {"data_dir": "conll2003", "revision": "refs/convert/parquet"}
    assert calls[2] == ("Yale-LILY/aeslc", "default", None, {})
    load_dataset("crows_pairs", split="test")  # shipped: its folder, never the hub
    assert Path(calls[3][0]) == registry.SHIPPED_ROOT / "crows_pairs" and "revision" not in calls[3][3]


def test_a_hub_dataset_with_no_hub_and_no_mirror_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path))  # a mirror without the dataset
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("rajpurkar/squad", "plain_text")
    text = str(err.value)
    for expected in (
        "rajpurkar/squad (plain_text)",
        "the hub (hub disabled by HF_HUB_OFFLINE=1)",
        "the offline mirror at",
        "no 'squad' there",
        "connect to the internet",
    ):
        assert expected in text


@pytest.mark.slow
def test_the_installed_package_carries_the_data(tmp_path):
    """What a notebook's first cell gets on Colab: a wheel of the course, installed outside any checkout."""
    source, wheels = tmp_path / "source", tmp_path / "wheels"  # built from a copy: no stale build/ of the checkout
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "course_utils", source / "course_utils", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
    )
    wheel = next(wheels.glob("course_utils-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for entry in registry.DATASETS:
        if entry.shipped:
            folder = registry.shipped_folder(entry)
            for path in folder.rglob("*"):
                if path.is_file():
                    assert f"course_utils/data/{path.relative_to(registry.SHIPPED_ROOT).as_posix()}" in names
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "COURSE_DATA_DIR"}
    env.update(PYTHONPATH=str(site), HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(tmp_path / "cache"))
    script = (
        "import course_utils; print(course_utils.__file__); from course_utils import load_dataset; "
        "print(load_dataset('lm_diagnostics', 'role_88', split='test').num_rows)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert str(site) in out.splitlines()[0]  # the installed copy, not the checkout
    assert "lm_diagnostics (role_88) <- the course's copy course_utils/data/lm_diagnostics" in out
    assert out.splitlines()[-1] == "88"


def test_the_tests_see_only_the_hubs_datasets():
    """The stand-in for the hub (tests/hub_standin.py) holds the registry's hub datasets and nothing shipped; the
    one the hub serves as a parquet export is laid out as that export is."""
    standin = res.mirror_dir()
    assert standin is not None and (standin / ".hub-standin").is_file()
    folders = {p.name for p in standin.iterdir() if p.is_dir()}
    assert folders == {e.folder for e in registry.DATASETS if not e.shipped} - {"cnn_dailymail"}
    conll = standin / "conll2003"
    assert not (conll / "README.md").exists()
    assert sorted(p.relative_to(conll).as_posix() for p in conll.rglob("*.parquet")) == [
        "conll2003/test/0000.parquet",
        "conll2003/train/0000.parquet",
        "conll2003/validation/0000.parquet",
    ]
    ds = load_dataset("eriktks/conll2003", "conll2003")  # data_dir, splits from folder names, as on the hub
    assert {k: v.num_rows for k, v in ds.items()} == {"train": 14041, "validation": 3250, "test": 3453}
    assert ds["train"].features["ner_tags"].feature.names[:3] == ["O", "B-PER", "I-PER"]


@pytest.mark.skipif(
    os.environ.get("COURSE_ONLINE_TESTS") != "1",
    reason="talks to the Hugging Face hub: COURSE_ONLINE_TESTS=1 HF_HUB_OFFLINE=0 pytest -k for_real",
)
def test_the_hub_sources_for_real():
    """Where the hub is reachable: every hub dataset loads as the registry says, CoNLL-2003 from its parquet export."""
    ds = load_dataset("eriktks/conll2003", "conll2003")
    assert {k: v.num_rows for k, v in ds.items()} == {"train": 14041, "validation": 3250, "test": 3453}
    assert ds["train"].features["ner_tags"].feature.names == [
        "O",
        "B-PER",
        "I-PER",
        "B-ORG",
        "I-ORG",
        "B-LOC",
        "I-LOC",
        "B-MISC",
        "I-MISC",
    ]
    assert load_dataset("nyu-mll/glue", "sst2", split="validation").num_rows == 872
    assert load_dataset("rajpurkar/squad", "plain_text", split="validation").num_rows == 10570
    assert load_dataset("Yale-LILY/aeslc", split="validation").num_rows == 1960


def test_outside_a_git_clone_the_fix_is_the_exact_reinstall(shipped_copy, monkeypatch):
    monkeypatch.setattr(registry, "repo_root", lambda: None)  # an installed copy, as on Colab
    (shipped_copy / "role_88" / "test-00000-of-00001.parquet").unlink()
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("lm_diagnostics", "role_88")
    assert 'pip install --force-reinstall --no-deps "course-utils @ git+https://github.com/' in str(err.value)
    assert "restart the runtime" in str(err.value)


def test_a_stray_parquet_file_is_refused(shipped_copy):
    shutil.copy(
        shipped_copy / "role_88" / "test-00000-of-00001.parquet", shipped_copy / "role_88" / "test-extra.parquet"
    )
    with pytest.raises(registry.ShippedDataError, match="test-extra.parquet, which its README's `course_checksums`"):
        load_dataset("lm_diagnostics", "role_88")
