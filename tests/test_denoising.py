import random
import statistics

import pytest

from course_utils.denoising import (
    apply_infilling,
    corrupt_spans,
    count_spans,
    document_rotation,
    infilling_spans,
    noise_span_mask,
    poisson,
    random_segmentation,
    restore_spans,
    sentence_permutation,
    span_corruption,
    split_sentences,
    text_infilling,
    token_deletion,
    token_masking,
)

SENTINELS = [f"<extra_id_{i}>" for i in range(100)]
WORDS = "Thank you for inviting me to your party last week .".split()


def test_the_t5_papers_example():
    mask = [w in ("for", "inviting", "last") for w in WORDS]
    inputs, targets = corrupt_spans(WORDS, mask, ["<X>", "<Y>", "<Z>"])
    assert " ".join(inputs) == "Thank you <X> me to your party <Y> week ."
    assert " ".join(targets) == "<X> for inviting <Y> last <Z>"
    assert restore_spans(inputs, targets, ["<X>", "<Y>", "<Z>"]) == WORDS


@pytest.mark.parametrize("length", [2, 3, 10, 57, 512])
@pytest.mark.parametrize("seed", range(5))
def test_span_corruption_lengths_sentinel_order_and_reconstruction(length, seed):
    tokens = list(range(1000, 1000 + length))
    mask = noise_span_mask(length, 0.15, 3.0, rng=seed)
    noise, spans = sum(mask), count_spans(mask)
    assert len(mask) == length and 1 <= noise <= length - 1 and not mask[0] and mask[-1]
    inputs, targets = corrupt_spans(tokens, mask, SENTINELS)
    assert len(inputs) == length - noise + spans
    assert len(targets) == noise + spans + 1
    assert [t for t in inputs if t in SENTINELS] == SENTINELS[:spans]  # in order, each once
    assert [t for t in targets if t in SENTINELS] == SENTINELS[: spans + 1]  # ... and one final sentinel
    assert restore_spans(inputs, targets, SENTINELS) == tokens
    assert tokens == list(range(1000, 1000 + length)), "the input list is not modified"


def test_noise_density_and_mean_span_length_are_what_was_asked():
    rng = random.Random(0)
    masks = [noise_span_mask(200, 0.15, 3.0, rng) for _ in range(300)]
    assert all(sum(m) == 30 for m in masks)  # round(200 * 0.15), exactly
    assert all(count_spans(m) == 10 for m in masks)  # round(30 / 3)
    span_lengths, run = [], 0
    for mask in masks:
        for noisy in [*mask, False]:
            if noisy:
                run += 1
            elif run:
                span_lengths.append(run)
                run = 0
    assert statistics.mean(span_lengths) == pytest.approx(3.0)
    assert max(span_lengths) > 3, "span lengths vary"
    # the same seed gives the same spans; another seed different ones
    assert noise_span_mask(200, rng=1) == noise_span_mask(200, rng=1) != noise_span_mask(200, rng=2)


def test_random_segmentation_covers_every_item_with_non_empty_parts():
    for seed in range(20):
        parts = random_segmentation(17, 5, seed)
        assert sum(parts) == 17 and len(parts) == 5 and min(parts) >= 1
    with pytest.raises(ValueError, match="Cannot split 3 items into 4"):
        random_segmentation(3, 4)


@pytest.mark.parametrize("density", [0, 1, -0.1, 1.5, "0.15", True])
def test_noise_density_outside_zero_one_is_refused(density):
    with pytest.raises(ValueError, match=r"noise_density must be a number in \(0, 1\)"):
        noise_span_mask(20, density)


def test_bad_documents_and_too_few_sentinels_are_refused():
    with pytest.raises(ValueError, match="Cannot corrupt an empty document"):
        span_corruption([], SENTINELS)
    with pytest.raises(ValueError, match="at least 2 tokens"):
        span_corruption(["hello"], SENTINELS)
    with pytest.raises(TypeError, match="not a str"):
        span_corruption("a plain string", SENTINELS)
    with pytest.raises(ValueError, match="mean_span_length must be a number >= 1"):
        noise_span_mask(20, 0.15, 0.5)
    with pytest.raises(ValueError, match=r"10 noise spans need 11 sentinels .* only 3 given"):
        span_corruption(list(range(200)), ["<a>", "<b>", "<c>"], rng=0)
    with pytest.raises(ValueError, match="noise_mask has 2 entries for 3 tokens"):
        corrupt_spans(["a", "b", "c"], [True, False], SENTINELS)
    with pytest.raises(ValueError, match="already contains a sentinel"):
        corrupt_spans(["a", "<extra_id_0>", "c"], [False, True, False], SENTINELS)


def test_token_masking_and_deletion_rates():
    tokens = list(range(1000))
    masked = token_masking(tokens, -1, 0.15, rng=0)
    assert len(masked) == 1000 and masked.count(-1) == 150
    assert all(m == t for m, t in zip(masked, tokens) if m != -1)
    kept = token_deletion(tokens, 0.15, rng=0)
    assert len(kept) == 850 and kept == sorted(kept), "deletion keeps the order of what is left"
    with pytest.raises(ValueError, match=r"ratio must be a number in \[0, 1\)"):
        token_deletion(tokens, 1.0)


def test_poisson_draws_have_the_right_mean_and_zeros():
    rng = random.Random(0)
    draws = [poisson(3.0, rng) for _ in range(20000)]
    assert statistics.mean(draws) == pytest.approx(3.0, abs=0.05)
    assert draws.count(0) / len(draws) == pytest.approx(0.0498, abs=0.006)  # e^-3


def test_text_infilling_covers_the_ratio_with_one_mask_per_span():
    tokens = [f"w{i}" for i in range(400)]
    lengths = []
    for seed in range(30):
        spans = infilling_spans(len(tokens), 0.3, 3.0, rng=seed)
        assert sum(s.length for s in spans) == 120  # round(400 * 0.3)
        covered = [i for s in spans for i in range(s.start, s.start + s.length)]
        assert len(covered) == len(set(covered)), "spans never overlap"
        noised = apply_infilling(tokens, spans, "<mask>")
        assert noised.count("<mask>") == len(spans)
        assert len(noised) == len(tokens) - 120 + len(spans)
        assert [t for t in noised if t != "<mask>"] == [t for i, t in enumerate(tokens) if i not in set(covered)]
        lengths += [s.length for s in spans]
    assert 0 in lengths, "zero-length spans (inserted masks) occur"
    assert statistics.mean(lengths) == pytest.approx(3.0, abs=0.4)  # Poisson(3), the last span of each cut to fit
    for seed in range(200):  # short documents: the ratio is still covered exactly
        assert sum(s.length for s in infilling_spans(7, 0.5, 3.0, rng=seed)) == 4
    assert text_infilling(tokens, "<mask>", rng=4) == apply_infilling(tokens, infilling_spans(400, rng=4), "<mask>")
    with pytest.raises(ValueError, match="Cannot corrupt an empty document"):
        text_infilling([], "<mask>")


def test_sentence_permutation_and_document_rotation_keep_every_token():
    doc = "The cat sat . It was warm ! Why not ? the end".split()
    assert split_sentences(doc, {".", "!", "?"}) == [
        ["The", "cat", "sat", "."],
        ["It", "was", "warm", "!"],
        ["Why", "not", "?"],
        ["the", "end"],
    ]
    orders = {tuple(sentence_permutation(doc, rng=seed)) for seed in range(30)}
    assert len(orders) > 10 and all(sorted(o) == sorted(doc) for o in orders)
    for seed in range(10):
        rotated = document_rotation(doc, rng=seed)
        k = rotated.index(doc[0]) if rotated[0] != doc[0] else 0
        assert rotated[k:] + rotated[:k] == doc
    with pytest.raises(ValueError, match="Cannot corrupt an empty document"):
        document_rotation([])
