import pytest
import torch

from course_utils.cloze import label_logits, logits_at_mask, mask_label_logits, word_log_probs
from course_utils.prompting import Pattern, pattern_texts, single_token_neighbours, verbalizer_ids


def test_a_pattern_fills_its_fields_and_keeps_the_slot():
    p = Pattern("{text} It was [MASK].")
    assert p.fields == ("text",) and p.fill(text=" A fine film. ") == "A fine film. It was [MASK]."
    pair = Pattern("{a} ? [MASK] , {b}")
    assert pair.fields == ("a", "b") and pair.fill(a="x", b="y") == "x ? [MASK] , y"
    with pytest.raises(KeyError, match=r"needs the field\(s\) b; got a"):
        pair.fill(a="x")


@pytest.mark.parametrize(
    "template, message",
    [
        ("{text} It was great.", r"exactly one \[MASK\] slot .* has 0"),
        ("[MASK] {text} [MASK]", r"has 2"),
        ("It was [MASK].", r"needs a field for the example's text"),
        ("{text [MASK]", r"not a valid format string"),
    ],
)
def test_bad_patterns_say_what_is_wrong(template, message):
    with pytest.raises(ValueError, match=message):
        Pattern(template)
    with pytest.raises(TypeError, match="A pattern is a str"):
        Pattern(3)


def test_verbalizer_words_must_be_single_tokens(tokenizer):
    ids = verbalizer_ids(tokenizer, ["terrible", "great"])
    assert tokenizer.convert_ids_to_tokens(ids) == ["terrible", "great"]
    assert verbalizer_ids(tokenizer, {1: "great", 0: "terrible"}) == ids
    with pytest.raises(ValueError, match=r"'greatish' is \['great', '##ish'\].*Single-token words like it: great"):
        verbalizer_ids(tokenizer, ["terrible", "greatish"])
    with pytest.raises(ValueError, match="must differ"):
        verbalizer_ids(tokenizer, ["good", "good"])
    with pytest.raises(ValueError, match="one word per label"):
        verbalizer_ids(tokenizer, "great")
    with pytest.raises(ValueError, match=r"labels 0..1 to words; got labels \[1, 2\]"):
        verbalizer_ids(tokenizer, {1: "good", 2: "bad"})
    assert "great" in single_token_neighbours(tokenizer, "greaat")


def test_long_texts_are_cut_never_the_pattern(tokenizer):
    long = "a very long and winding review " * 40
    texts = pattern_texts(Pattern("{text} It was [MASK]."), [{"text": long}, {"text": "Short."}], tokenizer, 32)
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        assert len(ids) <= 32 and text.endswith("It was [MASK].") and ids.count(tokenizer.mask_token_id) == 1
    assert texts[1] == "Short. It was [MASK]."
    with pytest.raises(ValueError, match="leaves no room"):
        pattern_texts(Pattern("{text} " + "word " * 40 + "[MASK]"), [{"text": "x"}], tokenizer, 16)


def test_label_logits_are_the_mask_logits_of_the_label_words(tiny_mlm, tokenizer):
    texts = pattern_texts(
        Pattern("{text} It was [MASK]."), [{"text": "A fine film."}, {"text": "Dull."}], tokenizer, 64
    )
    ids = verbalizer_ids(tokenizer, ["terrible", "great"])
    scores = label_logits(tiny_mlm, tokenizer, texts, ids)
    assert scores.shape == (2, 2)
    # the same comparison through the vocabulary's log-softmax (lesson 06's word_log_probs)
    for column, word in enumerate(["terrible", "great"]):
        reference = torch.tensor(word_log_probs(tiny_mlm, tokenizer, texts, [word] * 2))
        other = torch.tensor(word_log_probs(tiny_mlm, tokenizer, texts, [["terrible", "great"][1 - column]] * 2))
        torch.testing.assert_close(scores[:, column] - scores[:, 1 - column], reference - other, rtol=1e-4, atol=1e-5)
    batch = tokenizer([t.replace("[MASK]", tokenizer.mask_token) for t in texts], padding=True, return_tensors="pt")
    trained = mask_label_logits(tiny_mlm, batch, tokenizer.mask_token_id, torch.tensor(ids))
    torch.testing.assert_close(trained, scores, rtol=1e-4, atol=1e-5)
    no_mask = tokenizer(["A fine film."], return_tensors="pt")
    with pytest.raises(ValueError, match="Every row needs exactly one mask token"):
        mask_label_logits(tiny_mlm, no_mask, tokenizer.mask_token_id, torch.tensor(ids))


def test_scores_come_back_in_the_order_of_the_texts_though_batches_run_shortest_first(tiny_mlm, tokenizer):
    from course_utils.cloze import fill_mask

    reviews = [
        "A long, slow and in the end rather tiresome film about nothing.",
        "Fine.",
        "Dull but pretty.",
        "Great.",
        "It is a film that some will like and many will not, for reasons of its own.",
    ]
    texts = pattern_texts(Pattern("{text} It was [MASK]."), [{"text": r} for r in reviews], tokenizer, 64)
    ids = verbalizer_ids(tokenizer, ["terrible", "great"])
    one_by_one = torch.cat([label_logits(tiny_mlm, tokenizer, [t], ids) for t in texts])  # [5, 2]
    torch.testing.assert_close(
        label_logits(tiny_mlm, tokenizer, texts, ids, batch_size=2), one_by_one, rtol=1e-4, atol=1e-5
    )
    words = ["great", "terrible", "good", "bad", "fine"]
    assert word_log_probs(tiny_mlm, tokenizer, texts, words, batch_size=2) == pytest.approx(
        [word_log_probs(tiny_mlm, tokenizer, [t], [w])[0] for t, w in zip(texts, words)], abs=1e-4
    )
    assert fill_mask(tiny_mlm, tokenizer, texts, k=3, batch_size=2) == [
        fill_mask(tiny_mlm, tokenizer, [t], k=3)[0] for t in texts
    ]
    assert label_logits(tiny_mlm, tokenizer, [], ids).shape == (0, 2)


def test_only_the_mask_rows_reach_the_head_and_other_mlms_take_their_whole_head(tiny_mlm, tokenizer):
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    texts = ["A fine film. It was [MASK].", "Dull. [MASK]!"]
    batch = tokenizer([t.replace("[MASK]", tokenizer.mask_token) for t in texts], padding=True, return_tensors="pt")
    rows, cols = (batch["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    torch.manual_seed(0)
    distil = DistilBertForMaskedLM(
        DistilBertConfig(
            vocab_size=len(tokenizer), dim=32, n_layers=1, n_heads=2, hidden_dim=64, max_position_embeddings=64
        )
    ).eval()
    for model, inputs in ((tiny_mlm, batch), (distil, {k: v for k, v in batch.items() if k != "token_type_ids"})):
        with torch.no_grad():
            want = model(**inputs).logits[rows, cols]  # every position, then the masks
            got = logits_at_mask(model, inputs, tokenizer.mask_token_id)
        assert got.shape == (2, len(tokenizer))
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
