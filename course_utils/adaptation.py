"""Domain- and task-adaptive pretraining (DAPT / TAPT; Gururangan et al., 2020): keep training a pretrained masked
language model on text of the target domain (DAPT) or of the task itself (TAPT), then fine-tune it as usual.

The pieces lesson 05 reuses: the SciBERT classification tasks with their label sets checked, corpora cut to equal size
(a fair wrong-domain control), corpora packed into blocks with clear errors when there is too little text, continued
MLM training on a copy of a model, a classifier on an MLM's encoder, and selective fine-tuning (train only the top
layers, then the layer norms too, then everything).
"""
from __future__ import annotations

import copy
import random
from collections.abc import Sequence

import torch

from .heads import PooledClassifier
from .packing import pack_blocks
from .pretraining import History, pretrain_mlm
from .resources import load_dataset

TASKS = "scibert_text_classification"   # shipped with the course: SciBERT's tasks: chemprot (13 relations), acl_arc (6 intents)


def check_label_sets(splits, task: str = "the task") -> list[str]:
    """The training split's label names, sorted; raises when another split has a label the training split lacks
    (a model cannot predict a class it never saw, and its score would be silently wrong)."""
    if "train" not in splits:
        raise ValueError(f"{task} has no 'train' split; it has {', '.join(splits)}.")
    names = sorted(set(splits["train"]["label"]))
    for split in splits:
        unseen = sorted(set(splits[split]["label"]) - set(names))
        if unseen:
            raise ValueError(f"The {split} split of {task} has label(s) {unseen} that its training split lacks "
                             f"(training labels: {names}). Use splits that share one label set.")
    return names


def load_task(config: str):
    """A SciBERT classification task by config (``chemprot`` or ``acl_arc``) -> (DatasetDict with an int
    ``label_id`` column added, label names)."""
    splits = load_dataset(TASKS, config)
    names = check_label_sets(splits, f"{TASKS}/{config}")
    index = {name: i for i, name in enumerate(names)}
    return splits.map(lambda row: {"label_id": index[row["label"]]}), names


def sample_texts(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` texts drawn without replacement (the same ones for the same seed): corpora cut to one size, so that a
    comparison between domains is not a comparison between amounts of text."""
    texts = list(texts)
    if not isinstance(n, int) or not 1 <= n <= len(texts):
        raise ValueError(f"Cannot draw n={n!r} texts from a corpus of {len(texts)}. Accepted: 1 to {len(texts)}.")
    return random.Random(seed).sample(texts, n)


def equal_size(a: Sequence[str], b: Sequence[str], seed: int = 0) -> tuple[list[str], list[str]]:
    """Both corpora cut to the size of the smaller one with :func:`sample_texts` (the smaller comes back whole,
    shuffled)."""
    n = min(len(a), len(b))
    return sample_texts(a, n, seed), sample_texts(b, n, seed)


def corpus_blocks(texts: Sequence[str], tokenizer, block_length: int, min_blocks: int = 1) -> torch.Tensor:
    """A corpus packed into MLM blocks [N, block_length] (see ``packing.pack_blocks``); raises when the corpus is
    empty or gives fewer than ``min_blocks`` blocks (at least one training batch)."""
    if isinstance(texts, str):
        raise TypeError("corpus_blocks needs a list of texts, not one string.")
    kept = [t for t in texts if isinstance(t, str) and t.strip()]
    if not kept:
        raise ValueError("The corpus is empty: it has no non-blank text. Give a list of sentences or paragraphs.")
    blocks = pack_blocks(kept, tokenizer, block_length)
    if blocks.shape[0] < min_blocks:
        raise ValueError(f"The corpus is too short: {len(kept)} texts make {blocks.shape[0]} block(s) of "
                         f"{block_length} tokens, and at least {min_blocks} are needed (one batch). Give more text.")
    return blocks


def continue_pretraining(model, tokenizer, blocks: torch.Tensor, eval_blocks: torch.Tensor, *, steps: int,
                         batch_size: int, lr: float, warmup_ratio: float = 0.1, eval_every: int | None = None,
                         seed: int = 0, mixed_precision: bool | None = None, progress: bool | None = None):
    """MLM training of a *copy* of ``model`` (a ``BertForMaskedLM``) on ``blocks`` [N, T] -> (adapted model in eval
    mode, ``History`` with the loss on ``eval_blocks`` at the start, every ``eval_every`` steps and at the end).
    The original model is left as it was, so one general model can be adapted several ways. ``mixed_precision``:
    as in ``pretrain_mlm`` (None follows the running profile)."""
    adapted = copy.deepcopy(model)
    history: History = pretrain_mlm(
        adapted, tokenizer, blocks, eval_blocks, steps=steps, batch_size=batch_size, lr=lr,
        warmup_steps=round(warmup_ratio * steps), eval_every=eval_every or steps, seed=seed,
        mixed_precision=mixed_precision, progress=progress,
    )
    return adapted.eval(), history


def classifier(mlm_model, num_labels: int, pooling: str = "mean", dropout: float = 0.1) -> PooledClassifier:
    """A sentence classifier on a copy of an MLM's encoder (``mlm_model.base_model``); the MLM head is left out."""
    return PooledClassifier(copy.deepcopy(mlm_model.base_model), num_labels, pooling, dropout)


def _encoder_layers(model) -> torch.nn.ModuleList:
    encoder = getattr(model, "encoder", model)
    stack = getattr(getattr(encoder, "encoder", None), "layer", None)
    if stack is None:
        raise TypeError(f"Cannot find the transformer layers of a {type(model).__name__}: expected "
                        ".encoder.encoder.layer (a PooledClassifier on a BERT-like encoder).")
    return stack


def train_only(model, top_layers: int | None, layer_norms: bool = False) -> int:
    """Selective fine-tuning of a ``PooledClassifier``: freeze the encoder except its ``top_layers`` last layers
    (and, with ``layer_norms``, every LayerNorm); the head always trains. ``top_layers=None`` trains everything,
    embeddings included (full fine-tuning). Returns the number of trainable parameters."""
    if top_layers is None:
        model.requires_grad_(True)
        return sum(p.numel() for p in model.parameters())
    layers = _encoder_layers(model)
    if not isinstance(top_layers, int) or not 0 <= top_layers <= len(layers):
        raise ValueError(f"top_layers={top_layers!r}: the encoder has {len(layers)} layers. "
                         f"Accepted: None (everything) or an int from 0 (head only) to {len(layers)}.")
    model.encoder.requires_grad_(False)
    for layer in list(layers)[len(layers) - top_layers:]:
        layer.requires_grad_(True)
    if layer_norms:
        for module in model.encoder.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.requires_grad_(True)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
