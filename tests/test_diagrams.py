"""The concept diagrams draw what their lessons say (labels checked), and refuse inputs they cannot draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course_utils import diagrams  # noqa: E402


def texts(fig) -> str:
    return (
        " | ".join(t.get_text() for ax in fig.axes for t in ax.texts)
        + " | "
        + " ".join(ax.get_title() for ax in fig.axes)
    )


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
