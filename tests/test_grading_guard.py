"""The grader's guard (``course_tools.grading.guard``) puts back the lesson's data a student's cell changed in place.

Rebinding a lesson's name was undone before; these cases change the lesson's objects themselves (03a's ``results``
written by a student's call to ``hand_run``, 04's ``labels`` filled with the pad id), which rebinding never sees.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import torch

from course_tools.grading.guard import MARKER, Guard


def _report(capsys) -> dict:
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith(MARKER)]
    assert len(lines) == 1, lines
    return json.loads(lines[0][len(MARKER) :])


def test_dicts_and_lists_changed_in_place_are_put_back_for_every_alias(capsys):
    results, curves = {"pretrained": 0.87, "scratch": 0.51}, [1.0, 0.5]
    runs = {"a": {"accuracy": [0.1, 0.2]}}
    inner = runs["a"]
    namespace = {"results": results, "curves": curves, "runs": runs}
    guard = Guard(namespace, ["my_answer"])
    results["pretrained"] = 0.99  # the student's cell (or a lesson helper it called)
    results["seed 1"] = 0.80
    curves.append(0.1)
    inner["accuracy"][0] = 9.0
    namespace["my_answer"] = 0.80
    guard.after_solution()
    assert results == {"pretrained": 0.87, "scratch": 0.51} and namespace["results"] is results
    assert curves == [1.0, 0.5] and inner == {"accuracy": [0.1, 0.2]} and runs["a"] is inner
    assert namespace["my_answer"] == 0.80
    report = _report(capsys)
    assert set(report["restored"]) == {"results (in place)", "curves (added to)", "runs (in place)"}
    assert set(report["changed_in_place"]) == {"results", "runs"}  # the exercise fails: it changed what was there


def test_items_only_added_earn_a_note_not_a_failure(capsys):
    results, curves, seen = {"pretrained": 0.87}, {"pretrained": [0.7, 0.5]}, {1, 2}
    namespace = {"results": results, "curves": curves, "seen": seen, "losses": [0.9]}
    guard = Guard(namespace, [])
    results["seed 1"], curves["seed 1"] = 0.85, [0.6]  # 03a's hand_run("seed 1", ...) in a student's cell
    seen.add(3)
    namespace["losses"].append(0.4)
    guard.after_solution()
    assert results == {"pretrained": 0.87} and curves == {"pretrained": [0.7, 0.5]} and seen == {1, 2}
    report = _report(capsys)
    assert report["changed_in_place"] == [] and len(report["restored"]) == 4


def test_tensors_arrays_and_tables_changed_in_place_are_put_back(capsys):
    labels = torch.tensor([[5, 7, -100, -100]])
    scores = np.array([0.5, np.nan, 0.25])
    table = pd.DataFrame({"accuracy": [0.8, 0.9]}, index=["cls", "mean"])
    namespace = {"labels": labels, "scores": scores, "table": table, "same_nan": torch.tensor([float("nan"), 1.0])}
    guard = Guard(namespace, [])
    labels[labels == -100] = 0  # a shift_right that writes into the caller's tensor
    scores.sort()
    table.loc["cls", "accuracy"] = 1.0
    guard.after_solution()
    assert torch.equal(labels, torch.tensor([[5, 7, -100, -100]])) and namespace["labels"] is labels
    assert np.array_equal(scores, [0.5, np.nan, 0.25], equal_nan=True)
    assert namespace["table"].loc["cls", "accuracy"] == 0.8
    # NaN equals NaN: an untouched tensor holding one is not reported
    report = _report(capsys)
    assert set(report["restored"]) == {"labels (in place)", "scores (in place)", "table (in place)"}
    assert set(report["changed_in_place"]) == {"labels", "scores", "table"}


def test_exports_and_models_may_change_and_nothing_is_reported_for_an_honest_cell(capsys):
    model = torch.nn.Linear(2, 2)
    namespace = {"model": model, "predictions": [], "results": {"a": 1}}
    guard = Guard(namespace, ["predictions"])
    with torch.no_grad():
        model.weight.fill_(3.0)  # an exercise may train a model: compared by identity only
    namespace["predictions"].append(1)  # the exercise's own name
    namespace["mine"] = {"new": 2}  # a name of the student's own
    guard.after_solution()
    assert (
        float(model.weight[0, 0].detach()) == 3.0
        and namespace["predictions"] == [1]
        and namespace["mine"] == {"new": 2}
    )
    assert _report(capsys) == {"restored": [], "changed_in_place": []}


def test_a_name_changed_and_then_rebound_gets_its_object_and_its_contents_back(capsys):
    results = {"pretrained": 0.87}
    namespace = {"results": results}
    guard = Guard(namespace, [])
    results["pretrained"] = 0.0
    namespace["results"] = {}
    guard.after_solution()
    assert namespace["results"] is results and results == {"pretrained": 0.87}
    report = _report(capsys)
    assert report["restored"] == ["results"] and report["changed_in_place"] == ["results"]


def test_data_past_the_budget_is_compared_by_identity_and_the_copies_are_dropped(capsys, monkeypatch):
    import course_tools.grading.guard as guard_module

    monkeypatch.setattr(guard_module, "_NODES", 10)
    rows = [{"input_ids": [1, 2, 3]} for _ in range(50)]  # more items than the budget: which dicts, not what's in them
    namespace = {"rows": rows}
    guard = Guard(namespace, [])
    rows[0]["input_ids"].append(4)  # inside an item: past the budget, not seen
    rows[1] = {"input_ids": []}  # an item swapped for another object: seen
    guard.after_solution()
    assert rows[0]["input_ids"] == [1, 2, 3, 4] and rows[1] == {"input_ids": [1, 2, 3]}
    assert _report(capsys)["changed_in_place"] == ["rows"] and guard.contents == {}


def test_a_checks_kept_reference_cannot_be_planted_or_changed_by_an_answer(capsys):
    """A hidden test may keep what it measured in ``_references`` for the next answer the wrong-answers tool scores;
    the guard keeps every answer off the names the lesson's checks assign, leading "_" or not."""
    namespace = {"model": object()}
    guard = Guard(namespace, ["my_answer"], ["_references", "expected", "my_answer"])
    # the student's cell: plants what the check would read, and a function reading its own global 'expected'
    exec("_references = {'key': 'planted'}\nexpected = 0.5\ndef my_answer():\n    return expected", namespace)
    guard.after_solution()
    assert "_references" not in namespace and "expected" not in namespace
    assert namespace["my_answer"]() == 0.5  # its own copy of the namespace keeps what the cell defined
    assert set(_report(capsys)["restored"]) == {"_references", "expected"}

    namespace["_references"] = kept = {"key": "measured", "weights": [1.0, 2.0]}  # the check keeps its reference
    guard.after_check(["_references"])
    assert namespace["_references"] is kept and _report(capsys)["tampered"] == []

    later = Guard(namespace, [], ["_references"])  # the next answer changes the kept reference in place
    kept["weights"][0] = 9.0
    later.after_solution()
    assert kept == {"key": "measured", "weights": [1.0, 2.0]} and namespace["_references"] is kept
    assert _report(capsys)["changed_in_place"] == ["_references"]


def test_a_check_name_created_while_another_exercise_is_checked_is_tampering(capsys):
    namespace: dict = {}
    guard = Guard(namespace, ["f"], ["_other_reference", "mine"])
    guard.after_solution()
    _report(capsys)
    namespace["mine"] = 1  # this exercise's check assigns it: allowed
    namespace["_other_reference"] = "planted from inside the student's function"
    guard.after_check(["mine"])
    assert _report(capsys)["tampered"] == ["_other_reference"] and "_other_reference" not in namespace
