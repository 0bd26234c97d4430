"""Train a BERT WordPiece tokenizer with the ``tokenizers`` library and wrap it for transformers.

Notebook 02 builds the same pipeline step by step; this is the compact version later lessons reuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import BertTokenizer

# Ids 0..4 in this order, as in bert-base-uncased's vocabulary layout ([PAD] = 0 keeps padding masks simple).
SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def check_vocab_size(vocab_size: int) -> None:
    """A vocabulary must hold the special tokens and at least one real piece."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(
            f"vocab_size={vocab_size!r} leaves no room for text: the {len(SPECIAL_TOKENS)} special tokens "
            f"{', '.join(SPECIAL_TOKENS)} come first. Accepted: an int > {len(SPECIAL_TOKENS)}; "
            "a few thousand is typical for a small corpus, bert-base-uncased uses 30,522."
        )


def train_wordpiece(texts: Iterable[str], vocab_size: int, *, lowercase: bool = True, min_frequency: int = 2):
    """Learn a WordPiece vocabulary of at most ``vocab_size`` pieces from ``texts``; return a ``BertTokenizer``.

    The result behaves like ``AutoTokenizer.from_pretrained('bert-base-uncased')`` (same special tokens, same
    ``[CLS] A [SEP] B [SEP]`` template) and saves with ``save_pretrained``. The vocabulary may come out smaller
    than ``vocab_size`` when the corpus has fewer distinct pieces. Ids are put in a canonical order (special tokens,
    then single characters, then longer pieces, each alphabetically), because the trainer numbers pieces in an order
    that changes from run to run and a model's weights depend on the numbering. The trainer can also break ties
    between equally frequent pairs differently from one process to the next, so two runs may differ by a piece or
    two (measured: 1 of 16,000 pieces, in 1 of 3 runs on the course's books); the same pieces always get the same ids.
    """
    check_vocab_size(vocab_size)
    if isinstance(texts, str):
        raise TypeError("train_wordpiece needs an iterable of texts (e.g. a list of paragraphs), not one string.")
    texts = [t for t in texts if isinstance(t, str) and t.strip()]
    if not texts:
        raise ValueError("train_wordpiece got no non-empty texts; pass the corpus as a list of strings.")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS), show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    return BertTokenizer(vocab=canonical_vocab(tok.get_vocab()), do_lower_case=lowercase)


def canonical_vocab(vocab: dict[str, int]) -> dict[str, int]:
    """The same pieces renumbered: specials as in ``SPECIAL_TOKENS``, then single characters, then longer pieces."""
    rest = sorted(set(vocab) - set(SPECIAL_TOKENS), key=lambda t: (len(t.removeprefix("##")) > 1, t))
    return {token: i for i, token in enumerate([t for t in SPECIAL_TOKENS if t in vocab] + rest)}


def pieces_per_word(tokenizer, texts: Sequence[str]) -> float:
    """Average number of WordPiece pieces per whitespace-separated word (the tokenizer's 'fertility')."""
    words = sum(len(t.split()) for t in texts)
    if words == 0:
        raise ValueError("pieces_per_word needs texts with at least one word.")
    pieces = sum(len(ids) for ids in tokenizer(list(texts), add_special_tokens=False)["input_ids"])
    return pieces / words
