"""Token classification (named entities, CoNLL-2003 style): one label per word, one prediction per sub-token.

A word such as "Headingley" becomes several WordPiece tokens (``heading ##ley``). Training labels the FIRST sub-token
of each word and gives -100 (ignored by the loss) to later sub-tokens and to [CLS] / [SEP]; at prediction time each
word takes the prediction of its first sub-token. The tokenizer's ``word_ids`` (fast tokenizers only) link the two.

    features, word_ids = encode_words(tokenizer, ds["tokens"], ds["ner_tags"], max_length=128)
    batch = DataCollatorForTokenClassification(tokenizer)(features[:8])      # labels padded with -100
    tags = word_predictions(logits[i], word_ids[i], n_words=len(ds[i]["tokens"]))

Lesson 03c introduces it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .training import IGNORE_INDEX


def align_labels(word_ids: Sequence[int | None], word_labels: Sequence[int]) -> list[int]:
    """Token labels [T] from word labels [W]: the word's label on its first sub-token, -100 on the rest and on
    special tokens (word id None)."""
    labels: list[int] = []
    previous = None
    for word in word_ids:
        if word is None:
            labels.append(IGNORE_INDEX)
            continue
        if not 0 <= word < len(word_labels):
            raise ValueError(
                f"Token for word {word}, but there are only {len(word_labels)} word labels (word ids 0 to "
                f"{len(word_labels) - 1}): word_ids and word_labels must come from the same sentence."
            )
        labels.append(IGNORE_INDEX if word == previous else int(word_labels[word]))
        previous = word
    return labels


def _check_fast(tokenizer) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            f"{type(tokenizer).__name__} is a slow tokenizer: it has no word_ids(), which map tokens back to words. "
            "Load a fast one (AutoTokenizer.from_pretrained(..., use_fast=True))."
        )


def encode_words(
    tokenizer, words: Sequence[Sequence[str]], word_labels: Sequence[Sequence[int]], max_length: int
) -> tuple[list[dict], list[list[int | None]]]:
    """Tokenize pre-split sentences -> (features, word_ids), two parallel lists with one entry per sentence.

    ``features[i]``: input_ids [T_i], token_type_ids [T_i] (if the tokenizer makes them) and labels [T_i] (aligned,
    -100 where ignored) - exactly what ``DataCollatorForTokenClassification`` and the model take.
    ``word_ids[i]``: [T_i], the word each token came from (None for special tokens); it stays out of the features
    because the collator would try to pad it into a tensor. Keep it to map predictions back with
    ``word_predictions``. Sentences longer than ``max_length`` tokens are cut; their last words get no tokens.
    """
    _check_fast(tokenizer)
    words = [list(w) for w in words]
    word_labels = [list(labels) for labels in word_labels]
    if len(words) != len(word_labels):
        raise ValueError(
            f"{len(words)} sentences but {len(word_labels)} label lists: give one label list per sentence."
        )
    for i, (w, labels) in enumerate(zip(words, word_labels)):
        if len(w) != len(labels):
            raise ValueError(f"Sentence {i} has {len(w)} words but {len(labels)} labels: give one label per word.")
        if w and not isinstance(w[0], str):
            raise ValueError(
                f"Sentence {i} is not a list of word strings (got {type(w[0]).__name__}): pass pre-split "
                "words, e.g. the CoNLL 'tokens' column."
            )
    if not isinstance(max_length, int) or max_length < 3:
        raise ValueError(f"max_length must be an int of at least 3 ([CLS], one token, [SEP]); got {max_length!r}.")
    enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
    keys = [k for k in ("input_ids", "token_type_ids") if k in enc]
    features, all_word_ids = [], []
    for i, labels in enumerate(word_labels):
        ids = enc.word_ids(i)
        features.append({**{k: enc[k][i] for k in keys}, "labels": align_labels(ids, labels)})
        all_word_ids.append(ids)
    return features, all_word_ids


def word_predictions(
    logits_or_ids,
    word_ids: Sequence[int | None],
    n_words: int | None = None,
    *,
    fill: int = 0,
    padding_side: str = "right",
) -> list[int]:
    """One predicted label id per word: the prediction at the word's first sub-token.

    ``logits_or_ids``: one sentence's logits [T, C] or predicted ids [T]; T may exceed ``len(word_ids)`` when the
    batch was padded (on ``padding_side``, the tokenizer's; right by default).
    Words cut off by truncation were never seen by the model. With ``n_words`` (the sentence's word count) they are
    predicted as ``fill`` (default 0, "O" in CoNLL-2003), so the result has one entry per word and any entity among
    them counts as missed, not silently dropped from the score. Without it, only the words that were seen are
    returned.
    """
    values = np.asarray(logits_or_ids)
    if values.ndim not in (1, 2):
        raise ValueError(f"Expected one sentence's logits [T, C] or predicted ids [T]; got shape {values.shape}.")
    ids = values.argmax(-1) if values.ndim == 2 else values
    if len(ids) < len(word_ids):
        raise ValueError(f"{len(ids)} predictions for {len(word_ids)} tokens: give the full row for this sentence.")
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left'; got {padding_side!r}.")
    if padding_side == "left":
        ids = ids[len(ids) - len(word_ids) :]
    first: dict[int, int] = {}
    for position, word in enumerate(word_ids):
        if word is not None and word not in first:
            first[word] = int(ids[position])
    seen = max(first, default=-1) + 1
    if n_words is None:
        n_words = seen
    elif n_words < seen:
        raise ValueError(f"n_words={n_words}, but the tokens cover {seen} words: n_words is the sentence's word count.")
    return [first.get(w, fill) for w in range(n_words)]


def to_tags(label_ids: Sequence[int], names: Sequence[str]) -> list[str]:
    """Label ids [W] -> tag strings [W] (what the seqeval metric compares), e.g. 3 -> 'B-ORG'."""
    out = []
    for i in label_ids:
        i = int(i)
        if not 0 <= i < len(names):
            raise ValueError(f"Label id {i} is out of range: there are {len(names)} tags ({', '.join(names)}).")
        out.append(names[i])
    return out


def label_names(dataset, column: str = "ner_tags") -> list[str]:
    """The tag names of a token-classification column (a list of ClassLabel), e.g. CoNLL-2003's nine NER tags."""
    columns = list(getattr(dataset, "column_names", []) or [])
    if column not in columns:
        raise ValueError(
            f"No label column {column!r}; the dataset has {columns}. Pass column=... (CoNLL-2003: "
            "'ner_tags', 'pos_tags' or 'chunk_tags')."
        )
    feature = dataset.features[column]
    names = getattr(getattr(feature, "feature", None), "names", None)
    if not names:
        raise ValueError(f"Column {column!r} is {feature}, not a list of class labels (List(ClassLabel(names=...))).")
    return list(names)


def check_tag_labels(model, names: Sequence[str]) -> None:
    """Refuse a token-classification model whose output size (or named labels) does not fit the tag set."""
    config = getattr(model, "config", None)
    got = getattr(config, "num_labels", None)
    if got != len(names):
        raise ValueError(
            f"The model has num_labels={got}, but the tag set has {len(names)} tags ({', '.join(names)}). Load it with "
            f"AutoModelForTokenClassification.from_pretrained(..., num_labels={len(names)})."
        )
    id2label = {int(k): v for k, v in (getattr(config, "id2label", None) or {}).items()}
    generic = all(v == f"LABEL_{k}" for k, v in id2label.items())
    if id2label and not generic and [id2label.get(i) for i in range(len(names))] != list(names):
        raise ValueError(
            f"The model's labels {[id2label.get(i) for i in range(len(names))]} are not the tag set {list(names)} in "
            "the same order: its predictions would be read as the wrong tags. Pass id2label / label2id built from "
            "the dataset's names when loading it."
        )
