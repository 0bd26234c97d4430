"""Denoising objectives for encoder-decoder pretraining: T5's span corruption and BART's five noising functions.

- **T5 span corruption** (Raffel et al., 2020): drop about 15 % of the tokens in spans of mean length 3; each dropped
  span becomes one *sentinel* in the input, and the target lists every sentinel followed by the tokens it hid, ending
  with one more sentinel. ``noise_span_mask`` chooses the spans, ``corrupt_spans`` applies a mask, and
  ``restore_spans`` puts inputs and targets back together (every corruption can be undone).
- **BART noising** (Lewis et al., 2020), each turning a document into the corrupted input whose original the decoder
  must produce: ``token_masking``, ``token_deletion``, ``text_infilling`` (spans with Poisson(3) lengths, each
  replaced by a single mask, zero-length spans inserting one), ``sentence_permutation`` and ``document_rotation``.

Every function works on a list of tokens of any kind (ids or strings, so that the papers' examples can be checked word
by word), returns new lists without touching its input, and takes ``rng``: a ``random.Random`` or an int seed.

Lesson 04 introduces these objectives and shows each on a sentence.
"""

from __future__ import annotations

import math
import random
from collections.abc import Container, Sequence
from typing import Any, NamedTuple


class SpanCorruption(NamedTuple):
    """T5's input/target pair; unpacks as ``inputs, targets = corrupt_spans(...)``."""

    inputs: list  # kept tokens, one sentinel where each dropped span was
    targets: list  # sentinel 0, span 0, sentinel 1, span 1, ..., final sentinel


class InfillingSpan(NamedTuple):
    """One span of BART's text infilling: ``length`` tokens from ``start`` become a single mask (0: a mask is inserted
    before ``start``)."""

    start: int
    length: int


# ------------------------------------------------------------------------------------------------------ checks
def _random(rng: random.Random | int | None) -> random.Random:
    if isinstance(rng, random.Random):
        return rng
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool)):
        return random.Random(rng)
    raise TypeError(f"rng must be a random.Random, an int seed or None; got {type(rng).__name__}.")


def _document(tokens: Sequence[Any], at_least: int = 1) -> list:
    if isinstance(tokens, str):
        raise TypeError(
            "tokens must be a sequence of tokens, not a str: split the text first (str.split or a tokenizer)."
        )
    tokens = list(tokens)
    if len(tokens) < at_least:
        what = "an empty document" if not tokens else f"a document of {len(tokens)} token"
        raise ValueError(
            f"Cannot corrupt {what}: this noising needs at least {at_least} token{'s' if at_least > 1 else ''}."
        )
    return tokens


def _fraction(name: str, value: float, *, low_open: bool = True) -> float:
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (0 < value < 1 if low_open else 0 <= value < 1)
    )
    if not ok:
        interval = "(0, 1)" if low_open else "[0, 1)"
        raise ValueError(f"{name} must be a number in {interval}; got {value!r}.")
    return float(value)


# ------------------------------------------------------------------------------------------------------ T5
def random_segmentation(total: int, parts: int, rng: random.Random | int | None = None) -> list[int]:
    """Lengths of ``parts`` non-empty consecutive segments of ``total`` items, every such split equally likely."""
    if not 1 <= parts <= total:
        raise ValueError(f"Cannot split {total} items into {parts} non-empty segments.")
    cuts = sorted(_random(rng).sample(range(1, total), parts - 1))
    return [end - start for start, end in zip([0, *cuts], [*cuts, total])]


def noise_span_mask(
    length: int, noise_density: float = 0.15, mean_span_length: float = 3.0, rng: random.Random | int | None = None
) -> list[bool]:
    """Which of ``length`` positions T5 drops: ``round(length * noise_density)`` of them (at least 1, at most
    ``length - 1``) in ``round(noise / mean_span_length)`` spans (at least 1); span and gap lengths are random
    segmentations, and the sequence starts with kept tokens and ends with a dropped span, as in T5's own code.
    Returns ``length`` booleans, True = dropped."""
    _fraction("noise_density", noise_density)
    if not isinstance(mean_span_length, (int, float)) or isinstance(mean_span_length, bool) or mean_span_length < 1:
        raise ValueError(f"mean_span_length must be a number >= 1; got {mean_span_length!r}.")
    if not isinstance(length, int) or length < 2:
        raise ValueError(
            f"Span corruption needs a document of at least 2 tokens (one kept, one dropped); got length {length!r}."
        )
    rng = _random(rng)
    num_noise = min(max(round(length * noise_density), 1), length - 1)
    num_spans = min(max(round(num_noise / mean_span_length), 1), num_noise, length - num_noise)
    noise_lengths = random_segmentation(num_noise, num_spans, rng)
    keep_lengths = random_segmentation(length - num_noise, num_spans, rng)
    mask: list[bool] = []
    for keep, noise in zip(keep_lengths, noise_lengths):
        mask += [False] * keep + [True] * noise
    return mask


def count_spans(noise_mask: Sequence[bool]) -> int:
    """Number of maximal runs of True in ``noise_mask``."""
    return sum(1 for i, noisy in enumerate(noise_mask) if noisy and (i == 0 or not noise_mask[i - 1]))


def corrupt_spans(tokens: Sequence[Any], noise_mask: Sequence[bool], sentinels: Sequence[Any]) -> SpanCorruption:
    """Apply a noise mask T5's way: each run of dropped tokens becomes the next sentinel in the input; the target is
    each sentinel followed by the tokens it replaced, then one final sentinel. Needs one sentinel per span plus one.

    >>> words = "Thank you for inviting me to your party last week .".split()
    >>> mask = [w in ("for", "inviting", "last") for w in words]
    >>> inputs, targets = corrupt_spans(words, mask, ["<X>", "<Y>", "<Z>"])
    >>> " ".join(inputs), " ".join(targets)
    ('Thank you <X> me to your party <Y> week .', '<X> for inviting <Y> last <Z>')
    """
    tokens = _document(tokens)
    noise_mask = [bool(m) for m in noise_mask]
    if len(noise_mask) != len(tokens):
        raise ValueError(f"noise_mask has {len(noise_mask)} entries for {len(tokens)} tokens; they must match.")
    spans = count_spans(noise_mask)
    if spans + 1 > len(sentinels):
        raise ValueError(
            f"{spans} noise spans need {spans + 1} sentinels (one per span and a final one); only "
            f"{len(sentinels)} given. Lower noise_density, raise mean_span_length, shorten the "
            f"document, or add sentinel tokens."
        )
    if any(s in sentinels for s in tokens):
        raise ValueError(
            "The document already contains a sentinel token; sentinels must be tokens that text never has."
        )
    inputs, targets, span = [], [], -1
    for i, (token, noisy) in enumerate(zip(tokens, noise_mask)):
        if noisy and (i == 0 or not noise_mask[i - 1]):
            span += 1
            inputs.append(sentinels[span])
            targets.append(sentinels[span])
        (targets if noisy else inputs).append(token)
    targets.append(sentinels[span + 1])
    return SpanCorruption(inputs, targets)


def span_corruption(
    tokens: Sequence[Any],
    sentinels: Sequence[Any],
    noise_density: float = 0.15,
    mean_span_length: float = 3.0,
    rng: random.Random | int | None = None,
) -> SpanCorruption:
    """T5's pretraining example for one document: ``noise_span_mask`` then ``corrupt_spans``."""
    tokens = _document(tokens, at_least=2)
    return corrupt_spans(tokens, noise_span_mask(len(tokens), noise_density, mean_span_length, rng), sentinels)


def restore_spans(inputs: Sequence[Any], targets: Sequence[Any], sentinels: Sequence[Any]) -> list:
    """Undo ``corrupt_spans``: put each sentinel's tokens from ``targets`` back where it stands in ``inputs``."""
    hidden: dict[Any, list] = {}
    current = None
    for token in targets:
        if token in sentinels:
            current = token
            hidden[current] = []
        elif current is None:
            raise ValueError("targets must start with a sentinel.")
        else:
            hidden[current].append(token)
    restored: list = []
    for token in inputs:
        if token in sentinels:
            if token not in hidden:
                raise ValueError(f"Sentinel {token!r} is in the inputs but not in the targets.")
            restored += hidden[token]
        else:
            restored.append(token)
    return restored


# ------------------------------------------------------------------------------------------------------ BART
def _positions(n: int, ratio: float, rng: random.Random) -> set[int]:
    return set(rng.sample(range(n), round(n * ratio)))


def token_masking(
    tokens: Sequence[Any], mask_token: Any, ratio: float = 0.15, rng: random.Random | int | None = None
) -> list:
    """BART's token masking: ``round(len * ratio)`` random tokens become ``mask_token`` (as in BERT)."""
    tokens, ratio = _document(tokens), _fraction("ratio", ratio, low_open=False)
    chosen = _positions(len(tokens), ratio, _random(rng))
    return [mask_token if i in chosen else t for i, t in enumerate(tokens)]


def token_deletion(tokens: Sequence[Any], ratio: float = 0.15, rng: random.Random | int | None = None) -> list:
    """BART's token deletion: ``round(len * ratio)`` random tokens are removed; the model must find where."""
    tokens, ratio = _document(tokens), _fraction("ratio", ratio, low_open=False)
    chosen = _positions(len(tokens), ratio, _random(rng))
    return [t for i, t in enumerate(tokens) if i not in chosen]


def poisson(lam: float, rng: random.Random) -> int:
    """One draw from Poisson(``lam``) (Knuth's multiplication method; fine for the small lambdas used here)."""
    limit, k, product = math.exp(-lam), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def infilling_spans(
    length: int, ratio: float = 0.3, poisson_lambda: float = 3.0, rng: random.Random | int | None = None
) -> list[InfillingSpan]:
    """Choose BART's text-infilling spans for a document of ``length`` tokens: span lengths drawn from
    Poisson(``poisson_lambda``), placed where no other span is, until ``round(length * ratio)`` tokens are covered
    (the last span is cut to fit). Zero-length spans are kept: each inserts a mask. Returned sorted by position."""
    _fraction("ratio", ratio, low_open=False)
    if not isinstance(poisson_lambda, (int, float)) or isinstance(poisson_lambda, bool) or poisson_lambda <= 0:
        raise ValueError(f"poisson_lambda must be a positive number; got {poisson_lambda!r}.")
    if not isinstance(length, int) or length < 1:
        raise ValueError(f"Cannot infill an empty document (length {length!r}).")
    rng = _random(rng)
    covered = [False] * length
    used_gaps: set[int] = set()  # boundaries that already hold an inserted (zero-length) mask
    spans: list[InfillingSpan] = []
    remaining = round(length * ratio)
    while remaining > 0:
        span_length = min(poisson(poisson_lambda, rng), remaining)
        if span_length == 0:
            # a boundary i (before token i) not inside a span, not beside one, and not used yet
            gaps = [
                i
                for i in range(length + 1)
                if i not in used_gaps and not (i > 0 and covered[i - 1]) and not (i < length and covered[i])
            ]
            if gaps:
                gap = rng.choice(gaps)
                used_gaps.add(gap)
                spans.append(InfillingSpan(gap, 0))
            continue
        # free tokens, with no inserted mask strictly inside (one at either edge is fine: two masks side by side,
        # as when two spans meet)
        starts = [
            i
            for i in range(length - span_length + 1)
            if not any(covered[i : i + span_length]) and not any(g in used_gaps for g in range(i + 1, i + span_length))
        ]
        if not starts:  # the free stretches are too short for this length: cover one free token instead
            span_length = 1
            starts = [i for i in range(length) if not covered[i]]  # never empty: fewer than `length` are covered
        start = rng.choice(starts)
        covered[start : start + span_length] = [True] * span_length
        spans.append(InfillingSpan(start, span_length))
        remaining -= span_length
    return sorted(spans)


def apply_infilling(tokens: Sequence[Any], spans: Sequence[InfillingSpan], mask_token: Any) -> list:
    """Replace each span by one ``mask_token`` (a zero-length span inserts one)."""
    tokens = list(tokens)
    out, position = [], 0
    for start, length in sorted(spans):
        out += tokens[position:start] + [mask_token]
        position = start + length
    return out + tokens[position:]


def text_infilling(
    tokens: Sequence[Any],
    mask_token: Any,
    ratio: float = 0.3,
    poisson_lambda: float = 3.0,
    rng: random.Random | int | None = None,
) -> list:
    """BART's text infilling (its best noising, with ``ratio`` 0.3 and lambda 3): spans with Poisson lengths become a
    single mask each, so the model must also work out how many tokens are missing."""
    tokens = _document(tokens)
    return apply_infilling(tokens, infilling_spans(len(tokens), ratio, poisson_lambda, rng), mask_token)


def split_sentences(tokens: Sequence[Any], sentence_ends: Container) -> list[list]:
    """Cut a document after every token in ``sentence_ends``; a trailing piece without an end is a sentence too."""
    sentences, current = [], []
    for token in tokens:
        current.append(token)
        if token in sentence_ends:
            sentences.append(current)
            current = []
    return sentences + ([current] if current else [])


def sentence_permutation(
    tokens: Sequence[Any], sentence_ends: Container = (".", "!", "?"), rng: random.Random | int | None = None
) -> list:
    """BART's sentence permutation: the document's sentences (ended by a token in ``sentence_ends``) in random order."""
    sentences = split_sentences(_document(tokens), sentence_ends)
    _random(rng).shuffle(sentences)
    return [token for sentence in sentences for token in sentence]


def document_rotation(tokens: Sequence[Any], rng: random.Random | int | None = None) -> list:
    """BART's document rotation: a token chosen uniformly at random becomes the first; the model must find the start."""
    tokens = _document(tokens)
    k = _random(rng).randrange(len(tokens))
    return tokens[k:] + tokens[:k]
