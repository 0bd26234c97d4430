import json

import numpy as np
import pytest
import torch

from course_utils import report


@pytest.fixture(autouse=True)
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(report, "_results", {})
    monkeypatch.setattr(report, "_sources", [])
    monkeypatch.setenv(report.RESULTS_ENV, str(tmp_path / "out" / "report.json"))
    return tmp_path / "out" / "report.json"


def test_record_writes_json_and_converts_scalars(fresh, capsys):
    returned = report.record(
        masked_fraction=np.float64(0.151), steps=torch.tensor(3), model="m", curve=np.array([1.0, 0.5])
    )
    assert returned is None and capsys.readouterr().out == ""  # quiet: a cell ending in record() displays nothing
    assert report.recorded()["masked_fraction"] == 0.151
    data = json.loads(fresh.read_text())
    assert data["results"] == {"masked_fraction": 0.151, "steps": 3, "model": "m", "curve": [1.0, 0.5]}
    report.record(steps=4)
    assert json.loads(fresh.read_text())["results"]["steps"] == 4
    assert not list(fresh.parent.glob("*.tmp")) and not list(
        fresh.parent.glob(".*.tmp")
    )  # nothing half-written left behind


def test_sources_are_written_beside_results(fresh):
    report.note_source("dataset", "nyu-mll/glue (sst2)", "mirror", "mirror ../shared/data/glue")
    report.note_source("dataset", "nyu-mll/glue (sst2)", "mirror", "mirror ../shared/data/glue")
    assert len(json.loads(fresh.read_text())["sources"]) == 1


@pytest.mark.parametrize(
    "bad, message", [(float("nan"), "finite"), (object(), "cannot record"), ({1, 2}, "cannot record")]
)
def test_bad_values_are_refused_and_nothing_is_stored(fresh, bad, message):
    with pytest.raises((ValueError, TypeError), match=message):
        report.record(good=1, bad=bad)
    assert report.recorded() == {} and not fresh.exists()


def test_record_needs_something():
    with pytest.raises(ValueError, match="at least one"):
        report.record()
