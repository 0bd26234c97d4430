"""Encoder-decoder models for lesson 04: build one, encode (source, target) pairs, measure its loss, generate.

Two ways to get an encoder-decoder:

- a seq2seq checkpoint (T5, BART) loaded as it is, online;
- a *warm start* (Rothe et al., 2020): an encoder-only BERT checkpoint on both sides. The decoder copy gets a causal
  self-attention mask and new, randomly initialised cross-attention; ``[CLS]`` starts every output and ``[SEP]`` ends
  it.

Targets are stored as ``labels`` (the tokens the decoder must produce, ending with the end-of-sequence token); the
model shifts them right behind the start token to make the decoder's inputs (teacher forcing).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, EncoderDecoderModel

from .quiet import quiet_if_asked
from .resources import announce, load_model, load_tokenizer, resolve_checkpoint
from .training import IGNORE_INDEX, batches, shortest_first

CROSS_ATTENTION_INITS = ("random", "self")


def warm_start(
    name: str, decoder_layers: int | None = None, cross_attention: str = "random", encoder_layers: int | None = None
):
    """An ``EncoderDecoderModel`` with the BERT checkpoint ``name`` (hub name or folder, through the course resolver)
    as encoder and as decoder (lesson 04). The encoder keeps the first ``encoder_layers`` layers and the decoder the
    first ``decoder_layers`` (None: all). Returns ``(model, tokenizer)``; the special tokens for generation are set
    from the tokenizer.

    ``cross_attention`` says where the decoder's new cross-attention blocks start: ``"random"`` (transformers'
    initialisation, as in Rothe et al., 2020) or ``"self"``, a copy of the same layer's pretrained self-attention
    (queries, keys, values, output and its LayerNorm). Lesson 04 uses ``"self"``: in its one-epoch copy warm-up the
    copied blocks learned to read the encoder (copy loss 1.5 nats) and random ones did not (4.7)."""
    quiet_if_asked()
    ckpt = resolve_checkpoint(name)
    config = AutoConfig.from_pretrained(ckpt.location)
    if config.model_type not in ("bert", "roberta", "electra"):
        raise ValueError(
            f"warm_start needs an encoder-only BERT-like checkpoint; {name!r} is a "
            f"{config.model_type!r} model. Accepted model types: bert, roberta, electra."
        )
    for what, layers in (("encoder_layers", encoder_layers), ("decoder_layers", decoder_layers)):
        if layers is not None and not (isinstance(layers, int) and 1 <= layers <= config.num_hidden_layers):
            raise ValueError(
                f"{what}={layers!r}: {name!r} has {config.num_hidden_layers} layers to copy. "
                f"Accepted: None (all) or an int from 1 to {config.num_hidden_layers}."
            )
    if cross_attention not in CROSS_ATTENTION_INITS:
        raise ValueError(
            f"cross_attention={cross_attention!r}: accepted {', '.join(map(repr, CROSS_ATTENTION_INITS))} "
            "(new random blocks, or copies of each decoder layer's self-attention)."
        )
    tokenizer = AutoTokenizer.from_pretrained(ckpt.location)
    extra = {
        f"{side}_num_hidden_layers": n
        for side, n in (("encoder", encoder_layers), ("decoder", decoder_layers))
        if n is not None
    }
    model = EncoderDecoderModel.from_encoder_decoder_pretrained(ckpt.location, ckpt.location, **extra)
    if cross_attention == "self":
        for layer in model.decoder.base_model.encoder.layer:  # same shapes: [H, H] projections, LayerNorm [H]
            layer.crossattention.load_state_dict(layer.attention.state_dict())
    start = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    end = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    for config_ in (model.config, model.generation_config):
        config_.decoder_start_token_id = start
        config_.bos_token_id = start
        config_.eos_token_id = end
        config_.pad_token_id = tokenizer.pad_token_id
    announce("model", f"{name} -> encoder-decoder (warm start)", ckpt.source, ckpt.detail)
    return model, tokenizer


def load_seq2seq(name: str):
    """A seq2seq checkpoint (T5, BART...) and its tokenizer by hub name, through the course resolver."""
    return load_model(AutoModelForSeq2SeqLM, name), load_tokenizer(name)


def source_prefix(model) -> str:
    """T5 was pretrained on a task mixture where every input names its task; it expects the prefix ``"summarize: "``."""
    return "summarize: " if getattr(model.config, "model_type", None) == "t5" else ""


def decoder_start(model) -> int:
    """The token that starts every output (``[CLS]`` for a warm-started BERT, ``</s>`` for BART, pad for T5)."""
    start = model.generation_config.decoder_start_token_id
    if start is None:
        start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:
        raise ValueError("The model has no decoder_start_token_id: set model.generation_config.decoder_start_token_id.")
    return int(start)


def encode_pairs(
    tokenizer,
    model,
    sources: Sequence[str],
    targets: Sequence[str],
    *,
    max_source_length: int,
    max_target_length: int,
    prefix: str = "",
) -> list[dict]:
    """Tokenize (source, target) texts -> one dict per pair with ``input_ids`` (``prefix`` + source, cut to
    ``max_source_length``) and ``labels`` (the target, cut to ``max_target_length``, ending with the tokenizer's
    end token). A leading label equal to the decoder's start token is dropped: the model puts it there itself."""
    sources, targets = list(sources), list(targets)
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets: pass one target per source.")
    for what, texts in (("source", sources), ("target", targets)):
        empty = [i for i, t in enumerate(texts) if not isinstance(t, str) or not t.strip()]
        if empty:
            raise ValueError(
                f"Empty {what} text at position(s) {empty[:5]}: every {what} must be a non-empty "
                "string. Filter those rows out first."
            )
    for what, n in (("max_source_length", max_source_length), ("max_target_length", max_target_length)):
        if not isinstance(n, int) or n < 2:
            raise ValueError(f"{what} must be an int of at least 2; got {n!r}.")
    drop = int(tokenizer(text_target="a")["input_ids"][0] == decoder_start(model))  # does the tokenizer add it?
    inputs = tokenizer([prefix + s for s in sources], truncation=True, max_length=max_source_length)["input_ids"]
    labels = tokenizer(text_target=targets, truncation=True, max_length=max_target_length + drop)["input_ids"]
    labels = [y[drop:] for y in labels]
    return [{"input_ids": x, "labels": y} for x, y in zip(inputs, labels)]


def collator(tokenizer):
    """Pads ``input_ids`` with the pad token (and builds the attention mask) and ``labels`` with ``IGNORE_INDEX``."""
    return DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX)


@torch.no_grad()
def seq2seq_loss(model, tokenizer, encoded: list[dict], batch_size: int = 64) -> float:
    """Cross-entropy per target token (nats), over all of ``encoded``: each batch's mean loss weighted by its
    number of target tokens, so the result does not depend on how the pairs were batched."""
    if not encoded:
        raise ValueError("No pairs to score: pass a non-empty list from encode_pairs.")
    model.eval()
    device = next(model.parameters()).device
    total, tokens = 0.0, 0
    for batch in batches(encoded, tokenizer, batch_size, collate=collator(tokenizer)):
        n = int((batch["labels"] != IGNORE_INDEX).sum())
        total += float(model(**{k: v.to(device) for k, v in batch.items()}).loss) * n
        tokens += n
    return total / tokens


@torch.no_grad()
def generate(model, tokenizer, encoded: list[dict], batch_size: int = 64, **generation) -> list[str]:
    """Decoded outputs for the sources in ``encoded`` (in their order), with any of ``model.generate``'s options
    (``max_new_tokens``, ``num_beams``, ``do_sample``, ``top_k``, ``top_p``, ``length_penalty``...). Sources go
    shortest first so that each batch pads little."""
    texts: list[str] = [""] * len(encoded)
    for indices, out in shortest_first(
        model, tokenizer, encoded, batch_size, run=lambda batch: model.generate(**batch, **generation)
    ):
        for i, text in zip(indices, tokenizer.batch_decode(out, skip_special_tokens=True)):
            texts[i] = text.strip()
    return texts


def lead_baseline(text: str, k: int) -> str:
    """The lead baseline of summarization: the first ``k`` whitespace-separated words of ``text``, single-spaced."""
    if k < 0:
        raise ValueError(f"k is a number of words, 0 or more; got {k}")
    return " ".join(text.split()[:k])
