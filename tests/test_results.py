import json

import numpy as np
import pytest
import torch

import course_utils.results as results


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(results, "_results", {})
    monkeypatch.setattr(results, "_sources", [])
    monkeypatch.setenv(results.RESULTS_ENV, str(tmp_path / "out" / "results.json"))
    return tmp_path / "out" / "results.json"


def test_record_writes_json_and_converts_scalars(fresh, capsys):
    returned = results.record(masked_fraction=np.float64(0.151), steps=torch.tensor(3), model="m",
                              curve=np.array([1.0, 0.5]))
    assert returned is None and capsys.readouterr().out == ""  # quiet: a cell ending in record() displays nothing
    assert results.recorded()["masked_fraction"] == 0.151
    data = json.loads(fresh.read_text())
    assert data["results"] == {"masked_fraction": 0.151, "steps": 3, "model": "m", "curve": [1.0, 0.5]}
    results.record(steps=4)
    assert json.loads(fresh.read_text())["results"]["steps"] == 4
    assert not list(fresh.parent.glob("*.tmp")) and not list(fresh.parent.glob(".*.tmp"))  # nothing half-written left behind


def test_sources_are_written_beside_results(fresh):
    results.note_source("dataset", "nyu-mll/glue (sst2)", "mirror", "mirror ../shared/data/glue")
    results.note_source("dataset", "nyu-mll/glue (sst2)", "mirror", "mirror ../shared/data/glue")
    assert len(json.loads(fresh.read_text())["sources"]) == 1


@pytest.mark.parametrize("bad, message", [(float("nan"), "finite"), (object(), "cannot record"), ({1, 2}, "cannot record")])
def test_bad_values_are_refused_and_nothing_is_stored(fresh, bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        results.record(good=1, bad=bad)
    assert results.recorded() == {} and not fresh.exists()


def test_record_needs_something():
    with pytest.raises(ValueError, match="at least one"):
        results.record()
