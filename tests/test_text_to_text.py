import math

import pytest

from course_utils.glue import GLUE_TASKS
from course_utils.text_to_text import from_text, squad_to_text, to_text


def test_glue_examples_read_like_t5s():
    assert to_text("sst2", {"sentence": "a gripping film", "label": 1}) == (
        "sst2 sentence: a gripping film",
        "positive",
    )
    pair = to_text("mnli", {"premise": "A man sleeps.", "hypothesis": "Nobody sleeps.", "label": 2})
    assert pair == ("mnli hypothesis: Nobody sleeps. premise: A man sleeps.", "contradiction")
    assert to_text("stsb", {"sentence1": "a", "sentence2": "b", "label": 3.75})[1] == "3.8"
    assert to_text("stsb", {"sentence1": "a", "sentence2": "b", "label": 0.0})[1] == "0.0"


@pytest.mark.parametrize("task", [t for t in GLUE_TASKS if not GLUE_TASKS[t].is_regression])
def test_every_label_survives_the_round_trip(task):
    t = GLUE_TASKS[task]
    row = {name: "text" for name in t.inputs}
    for label in range(len(t.labels)):
        assert from_text(task, to_text(task, {**row, "label": label}).target) == label
    assert from_text(task, "something else") == -1


def test_stsb_targets_parse_back_and_nonsense_is_nan():
    assert from_text("stsb", " 4.2 ") == pytest.approx(4.2)
    assert math.isnan(from_text("stsb", "very similar"))


def test_squad_as_text():
    row = {
        "id": "1",
        "question": "Who?",
        "context": "Ann ran.",
        "answers": {"text": ["Ann", "Ann"], "answer_start": [0, 0]},
    }
    assert squad_to_text(row) == ("question: Who? context: Ann ran.", "Ann")


def test_bad_rows_are_refused_with_what_is_wrong():
    with pytest.raises(KeyError, match="no 'sentence2' field"):
        to_text("mrpc", {"sentence1": "x", "label": 1})
    with pytest.raises(ValueError, match=r"labels are ids 0-1 \(negative, positive\); got -1"):
        to_text("sst2", {"sentence": "x", "label": -1})
    with pytest.raises(ValueError, match="similarity scores from 0 to 5; got -1"):
        to_text("stsb", {"sentence1": "x", "sentence2": "y", "label": -1})
    with pytest.raises(ValueError, match="Unknown GLUE task 'sst3'"):
        to_text("sst3", {"sentence": "x", "label": 0})
    with pytest.raises(ValueError, match="no answer text"):
        squad_to_text({"id": "9", "question": "q", "context": "c", "answers": {"text": [], "answer_start": []}})
