"""Cloze patterns and verbalizers (lesson 08): a task rewritten as the fill-in-the-blank question an MLM was trained on
(Schick & Schütze, 2021).

A *pattern* turns an example into text with one ``[MASK]``: ``"{text} It was [MASK]."``. A *verbalizer* names one
single-token word per label (``great`` for positive, ``terrible`` for negative). The MLM head's logits for those words
at the mask are the label scores (``cloze.label_logits``): zero-shot as they are, or fine-tuned with a cross-entropy
over just those words (PET, ``cloze.mask_label_logits``). ``[MASK]`` is written literally and replaced by the
tokenizer's own mask token, so one pattern serves BERT and RoBERTa."""

from __future__ import annotations

import difflib
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .cloze import SLOT, is_single_token


@dataclass(frozen=True)
class Pattern:
    """A cloze pattern: ``template`` holds one ``[MASK]`` and at least one ``{field}`` (``{text}``, or ``{a}`` and
    ``{b}`` for sentence pairs) that ``fill`` replaces with an example's text."""

    template: str

    def __post_init__(self) -> None:
        if not isinstance(self.template, str):
            raise TypeError(
                f"A pattern is a str such as '{{text}} It was {SLOT}.'; got {type(self.template).__name__}."
            )
        slots = self.template.count(SLOT)
        if slots != 1:
            raise ValueError(
                f"A pattern needs exactly one {SLOT} slot for the label word; {self.template!r} has "
                f"{slots}. Example: '{{text}} It was {SLOT}.'"
            )
        if not self.fields:
            raise ValueError(
                f"A pattern needs a field for the example's text, such as {{text}}; {self.template!r} "
                f"has none. Example: '{{text}} It was {SLOT}.'"
            )

    @property
    def fields(self) -> tuple[str, ...]:
        """The ``{field}`` names in the template, in order (``('text',)``)."""
        try:
            parsed = list(string.Formatter().parse(self.template))
        except ValueError as err:
            raise ValueError(
                f"Pattern {self.template!r} is not a valid format string ({err}); write fields as "
                f"{{text}} and a literal brace as {{{{ or }}}}."
            ) from None
        return tuple(name for _, name, _, _ in parsed if name is not None)

    def fill(self, **fields: str) -> str:
        """The pattern with each field replaced by its text; the ``[MASK]`` slot stays as written."""
        missing = [name for name in self.fields if name not in fields]
        if missing:
            raise KeyError(
                f"Pattern {self.template!r} needs the field(s) {', '.join(missing)}; got {', '.join(fields) or 'none'}."
            )
        return self.template.format(**{name: str(fields[name]).strip() for name in self.fields})


def single_token_neighbours(tokenizer, word: str, n: int = 5) -> list[str]:
    """Alternatives for a verbalizer word the tokenizer splits: its first piece when that is a whole word
    (``greatish`` -> ``great``), then whole-word vocabulary entries that look like it (difflib's ratio)."""
    vocabulary = [t for t in tokenizer.get_vocab() if t.isalpha() and t.islower() and not t.startswith("##")]
    pieces = tokenizer.tokenize(word)
    first = [pieces[0]] if pieces and pieces[0] in vocabulary and len(pieces[0]) > 2 else []
    close = difflib.get_close_matches(word.lower(), vocabulary, n=n + 1, cutoff=0.6)
    return (first + [w for w in close if w not in first])[:n]


def verbalizer_ids(tokenizer, words: Sequence[str] | Mapping[int, str]) -> list[int]:
    """Vocabulary ids of the label words, label 0 first. Each word must be one token, so that it can fill one
    ``[MASK]``; one that is not is an error naming its pieces and suggesting single-token words like it."""
    if isinstance(words, Mapping):
        if sorted(words) != list(range(len(words))):
            raise ValueError(f"A verbalizer maps labels 0..{len(words) - 1} to words; got labels {sorted(words)}.")
        words = [words[label] for label in range(len(words))]
    if isinstance(words, str) or len(words) < 2:
        raise ValueError(f"A verbalizer needs one word per label (at least two); got {words!r}.")
    if len(set(words)) != len(words):
        raise ValueError(f"Verbalizer words must differ, or two labels would get the same score; got {list(words)}.")
    ids = []
    for word in words:
        if not isinstance(word, str) or not is_single_token(tokenizer, word):
            pieces = tokenizer.tokenize(word) if isinstance(word, str) else word
            close = single_token_neighbours(tokenizer, word) if isinstance(word, str) else []
            hint = f" Single-token words like it: {', '.join(close)}." if close else ""
            raise ValueError(
                f"Verbalizer word {word!r} is {pieces} to this tokenizer: a label word must be one "
                f"token, to fill the one {SLOT}.{hint}"
            )
        ids.append(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)[0]))
    return ids


def pattern_texts(pattern: Pattern | str, rows: Sequence[Mapping[str, str]], tokenizer, max_length: int) -> list[str]:
    """Each row (a dict with the pattern's fields) as filled pattern text, at most ``max_length`` tokens with the
    special tokens. A long text is cut from its end, never the pattern, so the ``[MASK]`` is always there."""
    if not isinstance(pattern, Pattern):
        pattern = Pattern(pattern)
    overhead = len(
        tokenizer(pattern.fill(**{f: "" for f in pattern.fields}).replace(SLOT, tokenizer.mask_token))["input_ids"]
    )
    if overhead >= max_length:
        raise ValueError(
            f"Pattern {pattern.template!r} alone takes {overhead} tokens; max_length={max_length} "
            "leaves no room for the text."
        )
    filled = [pattern.fill(**{f: str(row[f]) for f in pattern.fields}) for row in rows]
    lengths = [len(ids) for ids in tokenizer([t.replace(SLOT, tokenizer.mask_token) for t in filled])["input_ids"]]
    out = []
    for row, text, length in zip(rows, filled, lengths):
        if length > max_length:  # rare: cut the longest field's end until the whole pattern fits
            fields = {f: str(row[f]) for f in pattern.fields}
            while (excess := len(tokenizer(text.replace(SLOT, tokenizer.mask_token))["input_ids"]) - max_length) > 0:
                longest = max(fields, key=lambda f: len(tokenizer.tokenize(fields[f])))
                pieces = tokenizer.tokenize(fields[longest])
                fields[longest] = tokenizer.convert_tokens_to_string(pieces[: max(0, len(pieces) - excess)])
                text = pattern.fill(**fields)
        out.append(text)
    return out
