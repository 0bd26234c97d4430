"""Wrong answers scored by an exercise's own checks, as the grader scores a student (issue 40): on the grader's tiny
fixture lesson, in one kernel, before each exercise's cell."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from course_tools.execute_notebook import execute
from course_tools.grading.exercises import ExerciseError, find_exercises
from course_tools.grading.runner import Step
from course_tools.grading.wrong_answers import load_wrong_answers, problems, run_steps, table

FIXTURE = Path(__file__).parent / "fixtures" / "grading" / "01_tiny.ipynb"
EXERCISES = find_exercises(nbformat.read(FIXTURE, 4), "01_tiny")

WRONG = '''
[[double]]
why = "squares instead of doubling (right only at 2)"
code = """
def double(x):
    return x * x
"""

[[double]]
why = "forgets the sign"
code = """
def double(x):
    return helper(abs(x))
"""

[[double]]
right = true
why = "adds x to itself"
code = """
def double(x):
    return x + x
"""

[[double]]
right = true
why = "a helper of its own named like the lesson's scale"
code = """
def scale(x):
    return helper(x)

def double(x):
    return scale(x)
"""

[[double]]
right = true
why = "helpers calling helpers, both named like the lesson's scale and math"
code = """
def math(x):
    return helper(x)

def scale(x):
    return math(x)

def double(x):
    return scale(x)
"""

[[double]]
why = "overwrites an item of the lesson's history in place"
code = """
def double(x):
    return helper(x)

history[0] = 0
"""

[[area]]
why = "the right value, through the loop the task forbids"
code = """
def area(r):
    total = 0.0
    for _ in range(1):
        total += math.pi * r ** 2
    return total
"""

[[area]]
right = true
why = "marked right but is not: pi to two places"
code = """
def area(r):
    return 3.14 * r ** 2
"""

[[vowels]]
why = "counts lower-case vowels only"
code = """
def vowels(s):
    return sum(ch in 'aeiou' for ch in s)
"""

[[vowels]]
why = "shows only with the full profile's data"
profiles = ["full"]
code = """
def vowels(s):
    return 0
"""

[[vowels]]
why = "wrong only for a string the checks never try"
code = """
def vowels(s):
    return 99 if s == 'rhythm' else sum(ch in 'aeiou' for ch in s.lower())
"""
'''


@pytest.fixture(scope="module")
def trials(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("wrong")
    (folder / "01_tiny.toml").write_text(WRONG)
    out = folder / "executed.ipynb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COURSE_PROFILE", "quick")
        entry = execute(FIXTURE, out, 120, folder)
    return {"entry": entry, "rows": {r["exercise"].split(":")[1]: r for r in entry["wrong_answers"]}, "out": out}


def test_each_wrong_answer_is_scored_by_the_visible_check_and_the_hidden_tests(trials):
    assert trials["entry"]["status"] == "ok", trials["entry"]["error"]
    double = trials["rows"]["double"]
    # x * x passes the visible check (double(2) == 4): only the hidden tests reject it; the lesson's history changed
    # in place is put back, and the answer that changed it earns nothing
    assert (double["wrong_answers"], double["rejected"], double["accepted"]) == (3, 3, [])
    assert double["blank_earns_nothing"] and double["solution_earns_all"] and not double["failures"]


def test_a_wrong_answer_the_checks_miss_is_a_problem_named_with_its_exercise(trials):
    vowels = trials["rows"]["vowels"]
    assert (vowels["wrong_answers"], vowels["rejected"]) == (2, 1)
    assert vowels["accepted"] == ["wrong only for a string the checks never try"]
    found = problems([vowels])
    assert found == ["01_tiny:vowels: wrong: wrong only for a string the checks never try: passed"]
    assert "fewer than 5" in table(list(trials["rows"].values()))


def test_a_wrong_answer_for_other_profiles_is_listed_as_not_tried_here(trials):
    vowels = trials["rows"]["vowels"]
    assert vowels["profile"] == "quick" and vowels["not_tried"] == ["shows only with the full profile's data"]
    assert "+1 not in quick" in table([vowels])


def test_right_alternatives_must_earn_the_points_and_one_refused_is_a_problem(trials):
    double, area = trials["rows"]["double"], trials["rows"]["area"]
    # a helper named like the lesson's `scale`: the lesson gets its 10 back, the student's double keeps its helper
    assert (double["right_answers"], double["right_accepted"], double["refused"]) == (3, 3, [])
    assert (area["right_answers"], area["right_accepted"]) == (1, 0)
    assert area["refused"] == ["marked right but is not: pi to two places"]
    assert any(p.startswith("01_tiny:area: right: marked right but is not") for p in problems([area]))
    assert "fewer than 2" in table([area]) and " 3 of 3 " in table([double])


def test_a_forbidden_loop_is_refused_with_the_rule_it_breaks(trials):
    area = trials["rows"]["area"]
    assert (area["wrong_answers"], area["rejected"]) == (1, 1) and area["ran"]
    assert area["blank_earns_nothing"] and area["solution_earns_all"]


def test_the_lesson_itself_runs_on_with_the_solution_after_the_trials(trials):
    executed = nbformat.read(trials["out"], 4)
    printed = [
        "".join(o.get("text", "") for o in c.get("outputs", [])) for c in executed.cells if c.cell_type == "code"
    ]
    assert any("Exercise 3: looks right." in p for p in printed) and any("the end: 10 2" in p for p in printed)
    assert [c[0] for c in trials["entry"]["cells"]] == [
        i for i, c in enumerate(executed.cells) if c.cell_type == "code"
    ]


def test_a_solution_that_fails_its_own_check_is_a_problem(tmp_path):
    nb = nbformat.read(FIXTURE, 4)
    nb.cells[10].source = nb.cells[10].source.replace("s.lower()", "s")  # the instructor's own slip
    broken = tmp_path / "01_tiny.ipynb"
    nbformat.write(nb, broken)
    entry = execute(broken, tmp_path / "out.ipynb", 120, tmp_path)
    vowels = next(r for r in entry["wrong_answers"] if r["exercise"].endswith(":vowels"))
    assert not vowels["solution_earns_all"]
    assert any("solution: passes the visible check but not the hidden tests" in p for p in problems([vowels]))


@pytest.mark.parametrize(
    "text, message",
    [
        ('[[cube]]\nwhy = "x"\ncode = "def cube(x): return x"', r"no exercise 'cube'.*double, area, vowels"),
        ('[[double]]\nwhy = "x"', r"needs why = .* and code = "),
        ('[[double]]\nwhy = "x"\ncode = "def double(x) return 1"', r"does not parse"),
        ('[[double]]\nwhy = "x"\ncode = "pass"\nhint = "y"', r"unknown key\(s\) hint"),
        ('[[double]]\nwhy = "x"\ncode = "pass"\nprofiles = ["laptop"]', r"profiles is a list of quick, full"),
        ('[double]\nwhy = "x"\ncode = "pass"', r"as a \[\[double\]\] table"),
        ('[[double]]\nwhy = "a"\ncode = "pass"\n[[double]]\nwhy = "b"\ncode = "pass\\n"', r"same code as an earlier"),
        ("[[double]\n", r"not valid TOML"),
    ],
)
def test_a_malformed_wrong_answers_file_says_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "01_tiny.toml"
    path.write_text(text)
    with pytest.raises(ExerciseError, match=message):
        load_wrong_answers(path, EXERCISES)


def test_the_course_wrong_answers_name_real_exercises_and_parse():
    folder = Path(__file__).parent.parent / "notebooks" / "wrong_answers"
    files = sorted(folder.glob("*.toml"))
    assert files, "the course lists wrong answers in notebooks/wrong_answers/<notebook>.toml"
    for path in files:
        notebook = path.parent.parent / f"{path.stem}.ipynb"
        assert notebook.is_file(), f"{path.name} names no notebook"
        wrong = load_wrong_answers(path, find_exercises(nbformat.read(notebook, 4), path.stem))
        assert any(wrong.values()), f"{path.name} lists no wrong answer"


class _FakeClient:
    """Runs nothing: a cell whose code says 'fail' gets an error output; every cell run is remembered."""

    def __init__(self) -> None:
        self.nb, self.ran = nbformat.v4.new_notebook(), []

    def execute_cell(self, cell, index, store_history=False) -> None:
        self.ran.append(cell.source)
        if "fail" in cell.source:
            cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=cell.source, traceback=[])]


def test_once_the_answer_or_a_check_fails_only_the_guard_steps_run_on():
    steps = [
        Step("guard", "snapshot", "x"),
        Step("solution", "answer", "x"),
        Step("guard", "put back", "x"),
        Step("lesson", "between", None),
        Step("visible", "fail: the visible check", "x"),
        Step("hidden", "hidden tests", "x"),
        Step("guard", "last look", "x"),
    ]
    client = _FakeClient()
    run = run_steps(client, steps)
    assert client.ran == ["snapshot", "answer", "put back", "between", "fail: the visible check", "last look"]
    assert run.replies[4]["status"] == "error" and run.replies[5] == {"status": "skipped"}
    assert set(run.seconds) == {0, 1, 2, 3, 4, 6} and client.nb.cells == []
    client = _FakeClient()
    run_steps(client, [Step("solution", "fail", "x"), Step("lesson", "between", None), Step("guard", "g", "x")])
    assert client.ran == ["fail", "g"]


def test_a_reference_a_hidden_test_keeps_cannot_be_planted_by_an_answer(tmp_path):
    """Exercise 3's hidden test keeps its reference counts in ``_vowel_reference`` for the next answer scored in the
    kernel: a wrong answer that plants its own reference there, even in an earlier exercise's cell, is still refused."""
    nb = nbformat.read(FIXTURE, 4)
    visible, _ = nb.cells[11].source.split("### BEGIN HIDDEN TESTS")
    nb.cells[11].source = (  # only the kept reference tells a lower-case count from the right one
        visible + "### BEGIN HIDDEN TESTS\nif '_vowel_reference' not in globals():\n"
        "    _vowel_reference = {'AEIOU xyz': 5, 'queueing': 5}\n"
        "assert all(vowels(s) == n for s, n in _vowel_reference.items())\n### END HIDDEN TESTS"
    )
    lesson = tmp_path / "01_tiny.ipynb"
    nbformat.write(nb, lesson)
    planted = "_vowel_reference = {'banana': 3}\n"
    (tmp_path / "01_tiny.toml").write_text(
        '[[double]]\nright = true\nwhy = "right, and plants a later check\'s reference"\n'
        f'code = """\n{planted}def double(x):\n    return helper(x)\n"""\n'
        '[[vowels]]\nwhy = "counts lower-case vowels only, and plants the reference its check reads"\n'
        f'code = """\n{planted}def vowels(s):\n    return sum(ch in "aeiou" for ch in s)\n"""\n'
        '[[vowels]]\nwhy = "counts lower-case vowels only, and changes the kept reference in place"\n'
        'code = """\n_vowel_reference.clear()\ndef vowels(s):\n    return sum(ch in "aeiou" for ch in s)\n"""\n'
    )
    entry = execute(lesson, tmp_path / "out.ipynb", 120, tmp_path)
    rows = {r["exercise"].split(":")[1]: r for r in entry["wrong_answers"]}
    assert rows["double"]["solution_earns_all"] and rows["double"]["right_answers"] == 1
    assert rows["double"]["right_accepted"] == 1 and not rows["double"]["refused"], rows["double"]
    assert rows["vowels"]["wrong_answers"] == 2 and rows["vowels"]["rejected"] == 2, rows["vowels"]
    assert rows["vowels"]["solution_earns_all"]
