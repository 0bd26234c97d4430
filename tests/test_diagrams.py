"""The concept diagrams draw what their lessons say (labels checked), and refuse inputs they cannot draw."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from course_utils import diagrams  # noqa: E402
from course_utils.denoising import corrupt_spans  # noqa: E402


def texts(fig) -> str:
    return (
        " | ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        + " | "
        + " ".join(ax.get_title() for ax in fig.axes)
    )


def flat_texts(fig) -> str:
    """Every text on the figure, line breaks read as spaces (long notes are wrapped)."""
    return " ".join(texts(fig).split())


def test_bert_input_puts_segment_b_after_the_first_sep_and_counts_positions():
    fig = diagrams.bert_input(["[CLS]", "hi", "[SEP]", "yo", "[SEP]"])
    shown = texts(fig)
    assert shown.count("E_A") == 3 and shown.count("E_B") == 2  # [CLS] hi [SEP] are A; yo [SEP] are B
    assert all(f"E_{i}" in shown for i in range(5)) and "E_5" not in shown
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\[SEP\]"):
        diagrams.bert_input(["[CLS]", "hi"])


def test_the_other_diagrams_name_what_their_lessons_teach():
    for fig, words in (
        (diagrams.encoder_decoder(), ["cross-attention", "causal self-attention", "<start>"]),
        (diagrams.bi_vs_cross_encoder(pooling="mean"), ["cos(u, v)", "[CLS]", "same weights", "mean of the vectors"]),
        (diagrams.pet_pattern(scores={"positive": 3.25}), ["[MASK]", "great -> positive", "logit 3.25"]),
    ):
        shown = texts(fig)
        assert all(w in shown for w in words), (words, shown)
        plt.close(fig)


def test_a_pattern_without_one_mask_is_refused():
    with pytest.raises(ValueError, match="exactly one"):
        diagrams.pet_pattern(pattern="{text} It was great.")


# ------------------------------- Lesson 01 and 03a: pretraining objectives and the classification head
def row_at(ax, y: float) -> list[str]:
    """The texts drawn at height ``y`` inside the token columns (x >= 0), left to right."""
    hits = [t for t in ax.texts if t.get_position()[1] == y and t.get_position()[0] >= 0]
    return [t.get_text() for t in sorted(hits, key=lambda t: t.get_position()[0])]


def test_mlm_and_nsp_names_both_objectives_and_the_masking_rates():
    fig = diagrams.mlm_and_nsp()
    shown = flat_texts(fig)
    for word in ("[MASK]", "IsNext", "NotNext", "15 %", "80 %", "10 %", "random sentence from the corpus", "50 %"):
        assert word in shown, (word, shown)
    plt.close(fig)


def test_mlm_and_nsp_corrupts_one_of_each_kind_and_predicts_only_the_chosen_originals():
    fig = diagrams.mlm_and_nsp(["the", "cat", "sat"], ["it", "purred"], masked=(1, 3, 5))
    top = fig.axes[0]
    # "the" -> [MASK], "sat" -> a random word, "it" kept; a loss above each chosen position only
    assert row_at(top, 1.2) == ["[CLS]", "[MASK]", "cat", "piano", "[SEP]", "it", "purred", "[SEP]"]
    assert [t.get_text() for t in top.texts].count("loss") == 3
    assert row_at(top, 4.8) == ["the", "sat", "it"]
    plt.close(fig)


@pytest.mark.parametrize("masked", [(0,), (4,), (9,), (2, 2), (), (1.5,)])
def test_mlm_and_nsp_refuses_positions_outside_a_and_b(masked):
    # tokens: [CLS] the cat sat [SEP] it purred [SEP]; A and B are positions 1-3 and 5-6
    with pytest.raises(ValueError, match="masked"):
        diagrams.mlm_and_nsp(["the", "cat", "sat"], ["it", "purred"], masked=masked)


def test_mlm_and_nsp_refuses_special_tokens_in_the_sentences_and_empty_or_long_inputs():
    with pytest.raises(ValueError, match=r"\[CLS\]"):
        diagrams.mlm_and_nsp(["[CLS]", "the", "cat"], ["it"], masked=(2,))
    with pytest.raises(ValueError, match="tokens_b"):
        diagrams.mlm_and_nsp(["the", "cat"], [], masked=(1,))
    with pytest.raises(ValueError, match="at most 13"):
        diagrams.mlm_and_nsp("a b c d e f g h", "i j k l m n", masked=(1,))


def test_classification_head_names_its_parts_and_the_pooling():
    for pooling, words in (
        ("cls", ["[CLS]", "linear", "softmax", "cross-entropy", "every encoder layer", "H -> 2", "p(positive)"]),
        ("mean", ["[CLS]", "linear", "softmax", "cross-entropy", "mean", "Reimers & Gurevych"]),
    ):
        fig = diagrams.classification_head(pooling=pooling)
        shown = flat_texts(fig)
        assert all(w in shown for w in words), (words, shown)
        plt.close(fig)
    fig = diagrams.classification_head(num_labels=3)
    shown = flat_texts(fig)
    assert "H -> 3" in shown and "p(label 2)" in shown and "p(positive)" not in shown
    plt.close(fig)


def test_classification_head_refuses_unknown_pooling_and_fewer_than_two_labels():
    with pytest.raises(ValueError, match="'cls' or 'mean'"):
        diagrams.classification_head(pooling="max")
    with pytest.raises(ValueError, match="03b"):
        diagrams.classification_head(num_labels=1)
    with pytest.raises(ValueError, match="num_labels"):
        diagrams.classification_head(num_labels=2.0)


# ------------------------------------ Lessons 03c and 05: label alignment and the DAPT / TAPT pipeline
def test_label_alignment_names_what_lesson_03c_teaches():
    fig = diagrams.label_alignment()
    shown = texts(fig)
    for word in ("-100", "[CLS]", "[SEP]", "##son", "##shire", "B-PER", "B-LOC", "first piece", "ignore_index"):
        assert word in shown, (word, shown)
    plt.close(fig)


def test_label_alignment_labels_first_pieces_and_ignores_the_rest():
    fig = diagrams.label_alignment(["Headingley", "rocks"], ["B-LOC", "O"], [["heading", "##ley"], ["rocks"]])
    labels = [t.get_text() for t in fig.axes[0].texts]
    # training labels: -100 on [CLS], ##ley and [SEP]; the word's label on heading and rocks
    assert labels.count("-100") == 3
    # pieces that are not first pieces are not read back; every word gets its label back
    assert labels.count("not read") == 3
    assert "Headingley\nB-LOC" in labels and "rocks\nO" in labels
    plt.close(fig)


@pytest.mark.parametrize(
    ("words", "labels", "pieces", "message"),
    [
        (["a", "b"], ["O"], [["a"], ["b"]], "2 words, 1 labels"),
        (["a"], ["O"], [["a"], ["b"]], "1 words, 1 labels and 2 lists"),
        (["a", "b"], ["O", "O"], [["a"], []], "at least one piece"),
        (["a"], [0], [["a"]], "label.*string"),
        (["a"], ["O"], ["a"], "list of the word's pieces"),
        ([], [], [], "at least one word"),
    ],
)
def test_label_alignment_refuses_what_it_cannot_draw(words, labels, pieces, message):
    with pytest.raises(ValueError, match=message):
        diagrams.label_alignment(words, labels, pieces)


def test_dapt_tapt_pipeline_names_what_lesson_05_teaches():
    fig = diagrams.dapt_tapt_pipeline()
    shown = texts(fig)
    for word in ("DAPT", "TAPT", "fine-tune", "wrong domain", "unlabelled", "ChemProt", "biomedical papers"):
        assert word in shown, (word, shown)
    assert "TAPT alone" in shown and "DAPT alone" in shown and "DAPT then TAPT" in shown
    assert "Gururangan et al., 2020" in shown and "RoBERTa" in shown
    plt.close(fig)


def test_dapt_tapt_pipeline_takes_the_domain_and_task_it_is_given():
    fig = diagrams.dapt_tapt_pipeline(domain="computer science papers", task="ACL-ARC")
    shown = texts(fig).replace("\n", " ")
    assert "computer science papers" in shown and "ACL-ARC" in shown and "ChemProt" not in shown
    plt.close(fig)


@pytest.mark.parametrize("kwargs", [{"domain": ""}, {"task": "  "}, {"task": None}, {"domain": 3}])
def test_dapt_tapt_pipeline_refuses_empty_names(kwargs):
    with pytest.raises(ValueError, match="non-empty string"):
        diagrams.dapt_tapt_pipeline(**kwargs)


# ------------------------------------------------------ Lesson 04: T5 span corruption and BART noising
def row(fig, name: str) -> str:
    """The tokens drawn in one row (their texts carry the row's name as gid), left to right, top line first."""
    tokens = [t for ax in fig.axes for t in ax.texts if t.get_gid() == name]
    return " ".join(t.get_text() for t in sorted(tokens, key=lambda t: (-t.get_position()[1], t.get_position()[0])))


def test_span_corruption_draws_the_papers_figure_2():
    fig = diagrams.span_corruption()
    shown = texts(fig)
    for words in ("<extra_id_0>", "<extra_id_1>", "encoder input", "decoder target", "15 %", "mean length 3", "<X>"):
        assert words in shown, (words, shown)
    assert row(fig, "original text") == "Thank you for inviting me to your party last week ."
    assert row(fig, "encoder input") == "Thank you <extra_id_0> me to your party <extra_id_1> week ."
    assert row(fig, "decoder target") == "<extra_id_0> for inviting <extra_id_1> last <extra_id_2>"
    plt.close(fig)


def test_span_corruption_agrees_with_the_lessons_corruption_code_and_highlights_the_dropped_words():
    words = "the cat sat on the mat and purred".split()
    spans = [(0, 1), (3, 6)]
    fig = diagrams.span_corruption(words, spans)
    mask = [any(a <= i < b for a, b in spans) for i in range(len(words))]
    sentinels = [f"<extra_id_{i}>" for i in range(3)]
    inputs, targets = corrupt_spans(words, mask, sentinels)
    assert row(fig, "encoder input") == " ".join(inputs)
    assert row(fig, "decoder target") == " ".join(targets)
    boxes = [p for p in fig.axes[0].patches if isinstance(p, FancyBboxPatch)]
    highlighted = [
        p.get_facecolor() == matplotlib.colors.to_rgba(diagrams.COLOURS["mask"])
        for p in sorted(boxes, key=lambda p: (-p.get_y(), p.get_x()))[: len(words)]
    ]
    assert highlighted == mask  # the original row: dropped words in the mask colour, kept ones not
    plt.close(fig)


@pytest.mark.parametrize(
    "spans, message",
    [
        ([], "non-empty list"),
        ([(2, 2)], "start < end"),
        ([(5, 12)], "start < end <= 11"),
        ([(-1, 2)], "start < end"),
        ([(8, 9), (2, 4)], "sorted"),
        ([(2, 4), (3, 6)], "separated by at least one kept word"),
        ([(2, 4), (4, 6)], "separated by at least one kept word"),  # touching spans would be one span
        ([(0, 11)], "at least one word must be kept"),
        ([(2, 4, 6)], r"\(start, end\) pair"),
        ("2-4", "non-empty list"),
    ],
)
def test_span_corruption_refuses_spans_it_cannot_draw(spans, message):
    with pytest.raises(ValueError, match=message):
        diagrams.span_corruption(spans=spans)


def test_span_corruption_refuses_bad_words():
    for words in ("Thank you", [], ["Thank", ""], ["a", "<extra_id_0>"]):
        with pytest.raises(ValueError, match="words must"):
            diagrams.span_corruption(words, [(0, 1)])
    with pytest.raises(ValueError, match="too long to draw"):
        diagrams.span_corruption(["word"] * 60, [(0, 1)])


def test_bart_noising_shows_the_five_noisings_of_the_papers_figure_2():
    fig = diagrams.bart_noising()
    shown = texts(fig)
    for words in (
        "token masking",
        "token deletion",
        "text infilling",
        "sentence permutation",
        "document rotation",
        "Poisson(λ = 3)",
        "text infilling + sentence permutation",
        "30 %",
    ):
        assert words in shown, (words, shown)
    assert row(fig, "original document") == "A B C . D E ."
    assert row(fig, "token masking") == "A [MASK] C . [MASK] E ."
    assert row(fig, "token deletion") == "A C . E ."
    assert row(fig, "text infilling") == "A [MASK] . D [MASK] E ."  # 'B C' -> one mask; an empty span inserts one
    assert row(fig, "sentence permutation") == "D E . A B C ."
    assert row(fig, "document rotation") == "C . D E . A B"
    assert "A B C . D E ." in shown  # the decoder's target
    plt.close(fig)


def test_bart_noising_keeps_every_word_where_the_noising_only_moves_words():
    sentences = ["The meeting moved to Tuesday .", "Please bring the signed contract .", "Lunch is provided ."]
    fig = diagrams.bart_noising(sentences)
    words = " ".join(sentences).split()
    for name in ("sentence permutation", "document rotation"):
        moved = row(fig, name).split()
        assert sorted(moved) == sorted(words) and moved != words
    rotated = row(fig, "document rotation").split()
    start = len(words) - rotated.index("The")
    assert rotated == words[start:] + words[:start]
    assert (
        row(fig, "sentence permutation")
        == "Lunch is provided . Please bring the signed contract . The meeting moved to Tuesday ."
    )
    assert fig.get_size_inches()[0] <= 11
    plt.close(fig)


@pytest.mark.parametrize(
    "sentences, message",
    [
        ("A B C . D E .", "list of strings"),
        ([], "non-empty list"),
        (["A B C .", ""], "non-empty strings"),
        (["A B C .", 3], "non-empty strings"),
        (["A B C ."], "at least two sentences"),
        (["word " * 40, "end ."], "too long to draw"),
    ],
)
def test_bart_noising_refuses_documents_it_cannot_draw(sentences, message):
    with pytest.raises(ValueError, match=message):
        diagrams.bart_noising(sentences)


# ------------------------------------------------------------ Lesson 07: ELECTRA, distillation, ALBERT
def test_electra_draws_the_papers_figure_1_and_labels_every_token():
    fig = diagrams.electra()
    shown = texts(fig)
    assert all(w in shown for w in ["generator", "discriminator", "[MASK]", "λ\u00a0=\u00a050", "EVERY token"]), shown
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text() in ("original", "replaced")]
    # the paper's Figure 1: "the" sampled back as "the" counts as original; "cooked" -> "ate" is replaced
    assert labels == ["original", "original", "original", "replaced", "original", "original"]  # row label first
    assert "ate" in shown and shown.count("[MASK]") >= 2 and "sample =\noriginal" in shown
    plt.close(fig)


def test_electra_labels_follow_the_samples_not_the_masks():
    fig = diagrams.electra("a b c d", masked=[1, 3], replacements={1: "x", 3: "d"})
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text() in ("original", "replaced")][1:]
    assert labels == ["original", "replaced", "original", "original"]
    plt.close(fig)


def test_electra_refuses_positions_and_samples_it_cannot_draw():
    with pytest.raises(ValueError, match="from 0 to 4"):
        diagrams.electra(masked=[5])
    with pytest.raises(ValueError, match="distinct"):
        diagrams.electra(masked=[1, 1])
    with pytest.raises(ValueError, match=r"for positions \[0, 2\]"):
        diagrams.electra(masked=[0, 2], replacements={0: "the"})
    with pytest.raises(ValueError, match="for positions"):
        diagrams.electra(masked=[1], replacements={1: "chef", 2: "ate"})
    with pytest.raises(ValueError, match="replacements .* are needed"):
        diagrams.electra("a b c", masked=[1])
    with pytest.raises(ValueError, match="11"):
        diagrams.electra(["word"] * 12, masked=[0], replacements={0: "x"})
    with pytest.raises(ValueError, match="non-empty"):
        diagrams.electra("", masked=[0])


def test_distillation_prints_the_softmax_of_its_logits_at_t_and_the_t_squared_factor():
    for temperature in (2.0, 3):
        fig = diagrams.distillation(temperature=temperature)
        shown = texts(fig)
        soft = 1 / (1 + math.exp(-(2.10 - 0.37) / temperature))
        assert all(w in shown for w in ["teacher", "student", "T²", f"T = {temperature:g}", "gold label"]), shown
        assert "0.85" in shown and "0.15" in shown  # the same logits at T = 1
        assert f"{soft:.2f}" in shown and f"{1 - soft:.2f}" in shown
        assert f"T² = {temperature**2:g}" in shown and "softer" in shown
        plt.close(fig)
    fig = diagrams.distillation(0.5, gold_labels=False)
    assert "sharper" in texts(fig) and "gold label" not in texts(fig)
    plt.close(fig)


@pytest.mark.parametrize("temperature", [0, -1.0, float("nan"), float("inf"), "2", True])
def test_distillation_refuses_a_temperature_that_is_not_positive(temperature):
    with pytest.raises(ValueError, match="greater than 0"):
        diagrams.distillation(temperature)


def test_albert_prints_the_counts_its_arguments_give():
    fig = diagrams.albert_factorisation()
    shown = texts(fig)
    assert all(w in shown for w in ["V x E", "E x H", "V x H", "23.0 M", "3.9 M", "shared", "applied\n12 times"]), shown
    assert "23,040,000" in shown and "3,938,304" in shown  # 30,000 x 768; 30,000 x 128 + 128 x 768
    assert "12 x 7.1 M = 85.1 M" in shown  # 12 H² + 13 H per layer at H = 768
    plt.close(fig)
    fig = diagrams.albert_factorisation(vocab=1000, hidden=100, embedding=10, layers=3)
    shown = texts(fig)
    assert "100,000" in shown and "11,000" in shown and "applied\n3 times" in shown
    plt.close(fig)


def test_albert_refuses_sizes_it_cannot_factorise():
    with pytest.raises(ValueError, match="smaller than hidden"):
        diagrams.albert_factorisation(embedding=768)
    for bad in ({"layers": 0}, {"vocab": 1.5}, {"hidden": True}, {"embedding": -1}):
        with pytest.raises(ValueError, match="positive int"):
            diagrams.albert_factorisation(**bad)
