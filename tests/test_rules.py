"""What a task forbids, read from the answer's syntax tree (course_tools.grading.rules, issue 54)."""

from __future__ import annotations

import nbformat
import pytest

from course_tools.grading.exercises import ExerciseError, find_exercises
from course_tools.grading.rules import Rule, broken, read_rules

NO_CAST = Rule("round with bit operations, not a cast to bfloat16", forbid=("bfloat16",))
NO_LOOPS = Rule("no Python loops", loops=True)
PREDICTION = Rule("my_prediction is written down before you measure", literal=("my_prediction",))
HELPER = Rule("write it yourself, not with the course's helper", forbid=("adaptation.equal_tokens",))


@pytest.mark.parametrize(
    "code",
    [
        "y = x.to(torch.bfloat16)",
        "y = x.bfloat16()",
        "y = x.to(getattr(torch, 'bfloat16'))",
        "from torch import bfloat16 as b",
        "y = x.to(dtype=torch.bfloat16).float()",
    ],
)
def test_a_forbidden_name_is_found_however_it_is_spelled(code):
    assert broken(code, (NO_CAST,)) == [NO_CAST.rule]


@pytest.mark.parametrize(
    "code",
    [
        "for i in range(3):\n    pass",
        "while False:\n    pass",
        "y = [v for v in x]",
        "y = {k: 1 for k in x}",
        "y = sum(v for v in x)",
        "def f(x):\n    for v in x:\n        yield v",
    ],
)
def test_every_kind_of_loop_breaks_a_no_loops_rule(code):
    assert broken(code, (NO_LOOPS,)) == [NO_LOOPS.rule]


@pytest.mark.parametrize(
    "code",
    [
        "my_prediction = round(measured, 3)",
        "my_prediction = measured",
        "my_prediction = 0.1\nmy_prediction += 0.0",
        "my_prediction, other = measured, 1",
        "my_prediction = float('0.3')",
        "for my_prediction in [measured]:\n    pass",
        "if (my_prediction := measured):\n    pass",
        # bound out of the syntax tree's sight (a red team's answer, issue 54)
        "my_prediction = '0-1'\nglobals()['my_prediction'] = max(band_error, key=band_error.get)",
        "g = globals()\ng['my_' + 'prediction'] = measured",
        "import sys\nsetattr(sys.modules['__main__'], 'my_prediction', measured)",
        "vars()['my_prediction'] = measured",
        "import sys\nsys.modules[__name__].__dict__.update(my_prediction=measured)",
    ],
)
def test_a_prediction_computed_from_anything_is_refused(code):
    assert broken(code, (PREDICTION,)) == [PREDICTION.rule]


@pytest.mark.parametrize(
    "code", ["my_prediction = 0.3", "my_prediction = -0.05", "my_prediction = 1 / 3", "my_prediction = 'higher'"]
)
def test_a_written_down_prediction_keeps_the_rule(code):
    assert broken(code, (PREDICTION,)) == []


def test_a_course_helper_is_refused_by_its_module_and_name_and_an_own_function_is_not():
    assert broken("n = course_utils.adaptation.equal_tokens(a, b)", (HELPER,)) == [HELPER.rule]
    assert broken("from course_utils.adaptation import equal_tokens", (HELPER,)) == [HELPER.rule]
    assert broken("def equal_tokens(a, b):\n    return min(a, b)", (HELPER,)) == []


def test_code_in_a_string_is_refused_wherever_a_rule_applies_and_nowhere_else():
    assert broken("exec('y = x.to(torch.bfloat16)')", (NO_CAST,))[0].startswith("no exec()")
    assert broken("exec('y = 1')", ()) == []
    assert broken("def f(x:", (NO_LOOPS,)) == []  # a syntax error is reported by running it


@pytest.mark.parametrize(
    "meta, message",
    [
        ({"forbid": ["x"]}, "needs a 'rule'"),
        ([{"rule": "r"}], "forbids nothing"),
        ([{"rule": "r", "forbid": "bfloat16"}], "lists of names"),
        ([{"rule": "r", "loops": True, "why": 1}], "unknown key"),
    ],
)
def test_a_malformed_rule_says_what_is_wrong(meta, message):
    with pytest.raises(ValueError, match=message):
        read_rules(meta if isinstance(meta, list) else [meta], "lesson, ex")


def _notebook(solution: str, rules: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(
        solution, metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "ex"}, "course_rules": rules}
    )
    check = nbformat.v4.new_code_cell(
        "assert f([1]) == [1]",
        metadata={"nbgrader": {"solution": False, "grade": True, "grade_id": "ex_check", "points": 1}},
    )
    nb.cells = [cell, check]
    return nb


def test_the_exercise_carries_its_rules_and_its_reference_must_keep_them():
    good = "def f(x):\n    ### BEGIN SOLUTION\n    return list(x)\n    ### END SOLUTION"
    (exercise,) = find_exercises(_notebook(good, [{"rule": "no loops", "loops": True}]), "nb")
    assert exercise.rules == (NO_LOOPS.__class__("no loops", loops=True),)
    looped = "def f(x):\n    ### BEGIN SOLUTION\n    return [v for v in x]\n    ### END SOLUTION"
    with pytest.raises(ExerciseError, match="breaks its own rule: no loops"):
        find_exercises(_notebook(looped, [{"rule": "no loops", "loops": True}]), "nb")


def test_no_function_of_course_utils_is_named_like_an_exercise_s_answer():
    """A student imports course_utils: a helper that is an exercise's solution would let them skip it (issue 54).
    Helpers doing the same job under another name are refused by the exercise's forbid rule instead."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    defined = {
        node.name: path.relative_to(root).as_posix()
        for path in (root / "course_utils").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")
    }
    clashes = [
        f"{exercise.column}: {name} is defined in {defined[name]}"
        for path in sorted((root / "notebooks").glob("[0-9]*.ipynb"))
        for exercise in find_exercises(nbformat.read(path, 4), path.stem)
        for name in exercise.exports
        if name in defined
    ]
    assert clashes == []
