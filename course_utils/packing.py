"""Pack a corpus into full-length blocks: no padding, so every position of every batch is training signal.

Paragraphs are tokenized, joined end to end with ``[SEP]`` between them, and cut into blocks of
``[CLS] + (block_length - 2) pieces + [SEP]`` (RoBERTa's FULL-SENTENCES packing; Liu et al. 2019).

Lesson 02 introduces packing and uses it for every pretraining run; ``corpus_blocks`` packs any corpus for continued
pretraining with clear errors when there is too little text (lessons 05, 06, 07). Lesson 01 packs the books for its
span-boundary run.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def pack_blocks(texts: Sequence[str], tokenizer, block_length: int) -> torch.Tensor:
    """Return LongTensor [n_blocks, block_length]; the tail that does not fill a block is dropped."""
    if not isinstance(block_length, int) or isinstance(block_length, bool) or block_length < 3:
        raise ValueError(f"block_length must be an int >= 3 ([CLS], one piece, [SEP]); got {block_length!r}.")
    if isinstance(texts, str):
        raise TypeError("pack_blocks needs a list of texts (e.g. paragraphs), not one string.")
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    if cls is None or sep is None:
        raise ValueError(f"{type(tokenizer).__name__} has no [CLS]/[SEP] tokens; use a BERT-style tokenizer.")
    encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    stream: list[int] = []
    for ids in encoded:
        if ids:
            stream.extend(ids)
            stream.append(sep)
    body = block_length - 2
    n_blocks = len(stream) // body
    if n_blocks == 0:
        raise ValueError(
            f"The corpus has {len(stream)} tokens (with separators), fewer than one block of {body} pieces "
            f"(block_length={block_length} minus [CLS] and [SEP]). Give more text or a smaller block_length."
        )
    pieces = torch.tensor(stream[: n_blocks * body], dtype=torch.long).view(n_blocks, body)
    return torch.cat([torch.full((n_blocks, 1), cls), pieces, torch.full((n_blocks, 1), sep)], dim=1)


def corpus_blocks(texts: Sequence[str], tokenizer, block_length: int, min_blocks: int = 1) -> torch.Tensor:
    """A corpus packed into MLM blocks [N, block_length] (``pack_blocks``); raises when the corpus is
    empty or gives fewer than ``min_blocks`` blocks (at least one training batch)."""
    if isinstance(texts, str):
        raise TypeError("corpus_blocks needs a list of texts, not one string.")
    kept = [t for t in texts if isinstance(t, str) and t.strip()]
    if not kept:
        raise ValueError("The corpus is empty: it has no non-blank text. Give a list of sentences or paragraphs.")
    blocks = pack_blocks(kept, tokenizer, block_length)
    if blocks.shape[0] < min_blocks:
        raise ValueError(
            f"The corpus is too short: {len(kept)} texts make {blocks.shape[0]} block(s) of "
            f"{block_length} tokens, and at least {min_blocks} are needed (one batch). Give more text."
        )
    return blocks
