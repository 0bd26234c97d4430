import numpy as np
import pytest

from course_utils.metrics import load_metric
from course_utils.question_answering import (
    Window,
    answer_lengths,
    best_spans,
    encode_for_eval,
    encode_for_training,
    random_span_baseline,
    split_by_article,
    squad_inputs,
)
from course_utils.token_classification import (
    align_labels,
    check_tag_labels,
    encode_words,
    label_names,
    to_tags,
    word_predictions,
)


@pytest.fixture(scope="module")
def conll():
    from course_utils import load_dataset

    return load_dataset("eriktks/conll2003", "conll2003", split="validation").select(range(200))


@pytest.fixture(scope="module")
def squad():
    from course_utils import load_dataset

    return load_dataset("rajpurkar/squad", "plain_text", split="validation")


@pytest.fixture(scope="module")
def squad_rows(squad):
    return squad.select(range(300))


# ------------------------------------------------------------------------------------------------ token classification
def test_a_split_word_is_labelled_on_its_first_sub_token_only(tokenizer):
    words, labels = ["Akwasi", "visited", "Headingley"], [1, 0, 5]  # B-PER, O, B-LOC
    features, word_ids = encode_words(tokenizer, [words], [labels], max_length=32)
    tokens = tokenizer.convert_ids_to_tokens(features[0]["input_ids"])
    assert tokens == ["[CLS]", "ak", "##was", "##i", "visited", "heading", "##ley", "[SEP]"]
    assert word_ids[0] == [None, 0, 0, 0, 1, 2, 2, None]
    assert features[0]["labels"] == [-100, 1, -100, -100, 0, 5, -100, -100]
    assert set(features[0]) == {"input_ids", "token_type_ids", "labels"}


def test_align_labels_refuses_word_ids_from_another_sentence():
    with pytest.raises(ValueError, match=r"Token for word 2, but there are only 2 word labels"):
        align_labels([None, 0, 1, 2, None], [3, 0])


def test_words_to_tokens_to_word_predictions_round_trip(tokenizer, conll):
    features, word_ids = encode_words(tokenizer, conll["tokens"], conll["ner_tags"], max_length=128)
    assert any(len(set(ids) - {None}) < sum(i is not None for i in ids) for ids in word_ids)  # some words split
    for f, ids, gold in zip(features, word_ids, conll["ner_tags"]):
        # the labels stand in for a perfect model; what sits on later sub-tokens must not matter
        token_preds = [99 if label == -100 else label for label in f["labels"]]
        assert word_predictions(token_preds, ids, n_words=len(gold)) == list(gold)
        one_hot = np.eye(100)[token_preds + [7, 7]]  # logits [T + 2 padding, C]
        assert word_predictions(one_hot, ids) == list(gold)


def test_words_cut_by_truncation_are_predicted_as_fill(tokenizer):
    words, labels = ["Peter", "Blackburn", "went", "to", "Leicestershire"], [1, 2, 0, 0, 5]
    features, word_ids = encode_words(tokenizer, [words], [labels], max_length=4)
    assert word_ids[0] == [None, 0, 1, None]
    assert word_predictions(features[0]["labels"], word_ids[0], n_words=5) == [1, 2, 0, 0, 0]
    assert word_predictions(features[0]["labels"], word_ids[0]) == [1, 2]
    with pytest.raises(ValueError, match="n_words=1, but the tokens cover 2 words"):
        word_predictions(features[0]["labels"], word_ids[0], n_words=1)
    with pytest.raises(ValueError, match="3 predictions for 4 tokens"):
        word_predictions([0, 1, 2], word_ids[0])


def test_features_batch_with_the_token_classification_collator(tokenizer, conll):
    from transformers import DataCollatorForTokenClassification

    features, _ = encode_words(tokenizer, conll["tokens"][:6], conll["ner_tags"][:6], max_length=64)
    batch = DataCollatorForTokenClassification(tokenizer)(features)
    longest = max(len(f["input_ids"]) for f in features)
    assert batch["input_ids"].shape == batch["labels"].shape == batch["attention_mask"].shape == (6, longest)
    for row, f in zip(batch["labels"].tolist(), features):
        assert row == f["labels"] + [-100] * (longest - len(f["labels"]))


def test_encode_words_refuses_mismatched_inputs(tokenizer):
    with pytest.raises(ValueError, match="Sentence 0 has 2 words but 1 labels"):
        encode_words(tokenizer, [["EU", "rejects"]], [[3]], max_length=16)
    with pytest.raises(ValueError, match="2 sentences but 1 label lists"):
        encode_words(tokenizer, [["EU"], ["Germany"]], [[3]], max_length=16)
    with pytest.raises(ValueError, match="not a list of word strings"):
        encode_words(tokenizer, [[1, 2]], [[0, 0]], max_length=16)
    with pytest.raises(ValueError, match="max_length must be an int of at least 3"):
        encode_words(tokenizer, [["EU"]], [[3]], max_length=2)


def test_label_names_and_model_checks(conll):
    names = label_names(conll)
    assert names == ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
    assert to_tags([3, 0, 5], names) == ["B-ORG", "O", "B-LOC"]
    with pytest.raises(ValueError, match=r"Label id 9 is out of range: there are 9 tags"):
        to_tags([9], names)
    with pytest.raises(ValueError, match=r"No label column 'ner'.*'tokens'"):
        label_names(conll, "ner")
    with pytest.raises(ValueError, match="not a list of class labels"):
        label_names(conll, "tokens")

    class Model:
        class config:
            num_labels = 9
            id2label = {i: f"LABEL_{i}" for i in range(9)}

    check_tag_labels(Model, names)
    Model.config.id2label = dict(enumerate(names))
    check_tag_labels(Model, names)
    Model.config.id2label = dict(enumerate(reversed(names)))
    with pytest.raises(ValueError, match="not the tag set"):
        check_tag_labels(Model, names)
    Model.config.num_labels = 2
    with pytest.raises(ValueError, match=r"num_labels=2, but the tag set has 9 tags.*num_labels=9"):
        check_tag_labels(Model, names)


def test_seqeval_metric_agrees_with_the_seqeval_library():
    from seqeval.metrics import f1_score, precision_score, recall_score

    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "O", "O", "B-MISC"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "O", "O", "B-MISC"]]
    metric = load_metric("seqeval")
    for p, g in zip(pred, gold):  # evaluate's incremental API
        metric.add_batch(predictions=[p], references=[g])
    out = metric.compute()
    assert out["overall_f1"] == pytest.approx(f1_score(gold, pred))
    assert out["overall_precision"] == pytest.approx(precision_score(gold, pred)) == pytest.approx(2 / 4)
    assert out["overall_recall"] == pytest.approx(recall_score(gold, pred)) == pytest.approx(2 / 4)
    assert out["overall_accuracy"] == pytest.approx(7 / 9)
    assert out["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "number": 1}
    assert out["LOC"]["number"] == 1 and out["LOC"]["recall"] == 0.0
    with pytest.raises(ValueError, match="Sentence 0 has 1 predicted tags but 2 gold tags"):
        load_metric("seqeval").compute(predictions=[["O"]], references=[["O", "O"]])
    with pytest.raises(ValueError, match="Unknown scheme 'BIO'. Accepted: IOB1, IOB2"):
        load_metric("seqeval").compute(predictions=[["O"]], references=[["O"]], scheme="BIO")


# --------------------------------------------------------------------------------------------------------- squad metric
def _squad(pred: dict[str, str], gold: dict[str, list[str]]) -> dict[str, float]:
    return load_metric("squad").compute(
        predictions=[{"id": i, "prediction_text": t} for i, t in pred.items()],
        references=[{"id": i, "answers": {"text": g, "answer_start": [0] * len(g)}} for i, g in gold.items()],
    )


def test_squad_metric_on_hand_made_answers():
    assert _squad({"a": "Denver Broncos"}, {"a": ["Denver Broncos"]}) == {"exact_match": 100.0, "f1": 100.0}
    # normalisation: case, punctuation, articles, whitespace
    assert _squad({"a": "  the DENVER,  broncos!"}, {"a": ["Denver Broncos"]}) == {"exact_match": 100.0, "f1": 100.0}
    # partial overlap: 1 shared word, precision 1/3, recall 1/2 -> F1 0.4
    assert _squad({"a": "in Santa Clara"}, {"a": ["Santa Monica"]}) == {"exact_match": 0.0, "f1": pytest.approx(40.0)}
    # the best gold answer counts; means over questions
    out = _squad({"a": "Broncos", "b": "1990"}, {"a": ["Denver Broncos", "the Broncos"], "b": ["1989"]})
    assert out == {"exact_match": pytest.approx(50.0), "f1": pytest.approx(50.0)}
    assert _squad({"a": "an"}, {"a": ["the"]}) == {"exact_match": 100.0, "f1": 0.0}  # as the official v1.1 script


def test_squad_metric_refuses_unmatched_ids():
    with pytest.raises(ValueError, match=r"1 reference\(s\) without a prediction \(first: 'b'\)"):
        _squad({"a": "x", "c": "y"}, {"a": ["x"], "b": ["y"]})
    with pytest.raises(ValueError, match=r"No course metric 'squad' \('v2'\). Accepted: accuracy.*seqeval, squad"):
        load_metric("squad", "v2")


# ----------------------------------------------------------------------------------------------------- QA encoding
def test_training_labels_decode_to_the_answer(tokenizer, squad_rows):
    features = encode_for_training(tokenizer, squad_rows, max_length=384, stride=128)
    _, windows = encode_for_eval(tokenizer, squad_rows, max_length=384, stride=128)
    assert len(features) == len(windows) >= len(squad_rows)
    assert set(features[0]) == {"input_ids", "token_type_ids", "start_positions", "end_positions"}
    exact = labelled = 0
    for f, w in zip(features, windows):
        s, e = f["start_positions"], f["end_positions"]
        if s == 0:
            assert e == 0
            continue
        labelled += 1
        gold = squad_rows[w.example_index]["answers"]["text"][0]
        decoded = squad_rows[w.example_index]["context"][w.offsets[s][0] : w.offsets[e][1]]
        assert gold in decoded  # whole tokens cover the answer, so a word piece can make it longer
        exact += decoded == gold
    # not all: the mirror's answer_start is the answer's FIRST occurrence, e.g. "8" inside "18", "gold" in "golden"
    assert labelled >= len(squad_rows) and exact >= 0.95 * labelled


def test_a_long_context_gives_overlapping_windows_labelled_cls_where_the_answer_is_outside(tokenizer, squad_rows):
    rows = squad_rows.select(range(100))
    features = encode_for_training(tokenizer, rows, max_length=128, stride=32)
    _, windows = encode_for_eval(tokenizer, rows, max_length=128, stride=32)
    by_example: dict[int, list[int]] = {}
    for i, w in enumerate(windows):
        by_example.setdefault(w.example_index, []).append(i)
    multi = [ix for ix in by_example.values() if len(ix) > 1]
    assert multi, "no context needed more than one 128-token window"
    first, second = windows[multi[0][0]], windows[multi[0][1]]
    assert max(len(features[i]["input_ids"]) for i in multi[0]) <= 128
    last_chars = [o for o in first.offsets if o is not None][-1][1]
    assert [o for o in second.offsets if o is not None][0][0] < last_chars  # the stride makes them overlap
    for ix in multi:
        labels = [(features[i]["start_positions"], features[i]["end_positions"]) for i in ix]
        assert any(s > 0 for s, _ in labels)  # some window holds the answer ...
    assert any((features[i]["start_positions"], features[i]["end_positions"]) == (0, 0) for ix in multi for i in ix)


def test_best_spans_returns_the_gold_text_when_the_logits_point_at_it(tokenizer, squad_rows):
    rows = squad_rows.select(range(60))
    features = encode_for_training(tokenizer, rows, max_length=128, stride=32)
    eval_features, windows = encode_for_eval(tokenizer, rows, max_length=128, stride=32)
    assert [f["input_ids"] for f in eval_features] == [f["input_ids"] for f in features]
    rng = np.random.default_rng(0)
    start = rng.normal(size=(len(windows), 128))
    end = rng.normal(size=(len(windows), 128))
    for i, f in enumerate(features):
        if f["start_positions"] > 0:
            start[i, f["start_positions"]] += 20
            end[i, f["end_positions"]] += 20
    start[:, 0] = end[:, 0] = 50  # [CLS] is never an answer
    answers = best_spans(start, end, windows, rows)
    assert list(answers) == list(rows["id"])
    for f, w in zip(features, windows):  # exactly the labelled tokens' text, whichever window holds them
        if f["start_positions"] > 0:
            a, b = w.offsets[f["start_positions"]][0], w.offsets[f["end_positions"]][1]
            labelled = rows[w.example_index]["context"][a:b]
            assert answers[rows[w.example_index]["id"]] == labelled
    scores = load_metric("squad").compute(**squad_inputs(answers, rows))
    assert scores["exact_match"] > 90 and scores["f1"] > 90  # below 100 only where the labels are (see above)


def test_best_spans_respects_max_answer_tokens_and_refuses_bad_shapes():
    examples = [{"id": "q", "context": "one two three four"}]
    window = Window(0, [None, (0, 3), (4, 7), (8, 13), (14, 18), None])
    start, end = np.array([[0, 5, 0, 1, 0, 0]]), np.array([[0, 0, 0, 1, 5, 9]])
    assert best_spans(start, end, [window], examples) == {"q": "one two three four"}
    assert best_spans(start, end, [window], examples, max_answer_tokens=2) == {"q": "three four"}
    with pytest.raises(ValueError, match="got 1 start rows, 1 end rows, 2 windows"):
        best_spans(start, end, [window, window], examples)
    with pytest.raises(ValueError, match="has 6 tokens but only 3 start"):
        best_spans(start[:, :3], end, [window], examples)


def test_split_by_article_keeps_each_article_on_one_side(squad):
    train, heldout = split_by_article(squad, n_heldout=8, seed=0)
    assert len(set(heldout["title"])) == 8 and len(set(train["title"])) == 40
    assert not set(train["title"]) & set(heldout["title"])
    assert len(train) + len(heldout) == len(squad)
    _, again = split_by_article(squad, n_heldout=8, seed=0)
    assert list(again["id"]) == list(heldout["id"])
    _, other = split_by_article(squad, heldout_fraction=0.25, seed=1)
    assert len(set(other["title"])) == 12
    with pytest.raises(ValueError, match="Give exactly one of n_heldout"):
        split_by_article(squad, n_heldout=3, heldout_fraction=0.1)
    with pytest.raises(ValueError, match=r"n_heldout must be an int from 1 to 47 \(there are 48 articles\); got 48"):
        split_by_article(squad, n_heldout=48)
    with pytest.raises(ValueError, match="no 'title' column"):
        split_by_article(squad.remove_columns("title"), n_heldout=1)


def test_random_span_baseline_is_deterministic_and_scores_low(squad_rows):
    first = random_span_baseline(squad_rows, seed=0)
    assert first == random_span_baseline(squad_rows, seed=0) and first != random_span_baseline(squad_rows, seed=1)
    for row in squad_rows:
        assert first[row["id"]] in row["context"] and 1 <= len(first[row["id"]].split()) <= 5
    scores = load_metric("squad").compute(**squad_inputs(first, squad_rows))
    assert scores["f1"] < 15
    lengths = answer_lengths(squad_rows)
    assert len(lengths) >= len(squad_rows) and min(lengths) >= 1
    matched = random_span_baseline(squad_rows, seed=0, lengths=[2])
    assert all(len(t.split()) == 2 for t in matched.values())
    with pytest.raises(ValueError, match="lengths must be a non-empty list of positive word counts"):
        random_span_baseline(squad_rows, lengths=[])
    with pytest.raises(ValueError, match=r"1 of 1 questions have no predicted answer \(first: "):
        squad_inputs({}, squad_rows.select([0]))
