"""The pieces every training loop of the course shares, in one home: the ignored label, the optimizer, batching.

Lesson 02 writes its pretraining loop and lesson 03a its fine-tuning loop in the open; both (and lessons 04-08) take
these from here, so a fix reaches every loop at once:

- ``IGNORE_INDEX``: the label that cross-entropy, and every transformers head, leaves out of the loss;
- ``adamw``: AdamW for pretraining and fine-tuning alike, with PyTorch's fused kernel where it has one, weight decay
  on weight matrices and embeddings but not on biases and LayerNorm weights (Devlin et al., 2019);
- ``batches``: dynamically padded batches, shuffled or grouped by length (lesson 03a introduces them);
- ``shortest_first``: inference over examples sorted by length, so that each batch pads little (lesson 03a);
- ``mlm_parts``: the encoder and the MLM head of a masked LM, for losses that project only the masked positions
  (lesson 02);
- ``train_only``: selective fine-tuning, the top layers of an encoder trained and the rest frozen (lessons 05, 07).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import torch
from transformers import DataCollatorWithPadding
from transformers.trainer_pt_utils import LengthGroupedSampler

IGNORE_INDEX = -100  # the label PyTorch's cross-entropy (and every transformers head) leaves out of the loss


def adamw(
    params: Iterable[torch.nn.Parameter],
    *,
    lr: float,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    fused: bool | None = None,
    decay_vectors: bool = False,
) -> torch.optim.AdamW:
    """AdamW over the trainable ``params``. Tensors of two or more dimensions (weight matrices, embeddings) decay by
    ``weight_decay``; biases and LayerNorm weights (one dimension) do not, as in BERT (Devlin et al., 2019) and in the
    Trainer's default, unless ``decay_vectors=True``. ``fused``: PyTorch's fused kernel, one pass over all parameters
    per step instead of one per tensor, as the Trainer's default ``adamw_torch_fused`` (on 2 CPU cores a MiniLM
    fine-tuning step about a quarter faster, the update the same up to float rounding); None uses it wherever every
    parameter is a float on a CPU or CUDA device.

    Lesson 02's pretraining passes RoBERTa's ``betas=(0.9, 0.98), eps=1e-6`` (Liu et al., 2019) and ``fused=False``
    (the course checkpoint was trained unfused, and the fused kernel rounds differently); lesson 03a writes the
    fine-tuning version's parameter groups by hand."""
    params = [p for p in params if p.requires_grad]
    if fused is None:
        fused = bool(params) and all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    if decay_vectors:
        groups: list = params
    else:
        groups = [
            g
            for g in (
                {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
            )
            if g["params"]
        ]
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, fused=fused or None)


def batches(
    encoded: list[dict],
    tokenizer,
    batch_size: int,
    *,
    shuffle: bool = False,
    group_by_length: bool = False,
    seed: int = 0,
    collate: Callable[[list[dict]], dict] | None = None,
    length_key: str = "input_ids",
) -> Iterator[dict]:
    """Dynamically padded batches (dicts of tensors [B, T_batch]); optionally shuffled and grouped by the length of
    ``length_key`` (seq2seq pairs whose sources are all cut to one length group by ``"labels"``).

    ``collate`` pads a list of examples into a batch: ``DataCollatorWithPadding(tokenizer)`` by default;
    token classification passes ``DataCollatorForTokenClassification(tokenizer)``, which pads labels with
    ``IGNORE_INDEX``.
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int; got {batch_size!r}.")
    g = torch.Generator().manual_seed(seed)
    if group_by_length:
        if encoded and length_key not in encoded[0]:
            raise KeyError(
                f"length_key={length_key!r} is not a field of the examples; they have {', '.join(encoded[0])}."
            )
        order = list(LengthGroupedSampler(batch_size, lengths=[len(e[length_key]) for e in encoded], generator=g))
    elif shuffle:
        order = torch.randperm(len(encoded), generator=g).tolist()
    else:
        order = list(range(len(encoded)))
    collate = collate or DataCollatorWithPadding(tokenizer)
    for start in range(0, len(order), batch_size):
        yield collate([encoded[i] for i in order[start : start + batch_size]])


def check_fits(model, encoded: list[dict]) -> None:
    """Every encoded example must fit the model's position embeddings."""
    longest = max((len(e["input_ids"]) for e in encoded), default=0)
    positions = getattr(model.config, "max_position_embeddings", None)  # encoder-decoders (T5) may have no limit
    if positions is not None and longest > positions:
        raise ValueError(
            f"An example has {longest} tokens but the model has only {positions} position embeddings: encode with "
            f"encode_task(..., max_length={positions}) or less."
        )


def shortest_first(model, tokenizer, encoded: list[dict], batch_size: int, collate=None, run=None):
    """Run the model over ``encoded`` shortest first (each batch pads little), without labels; yields
    (indices into ``encoded``, output) per batch. ``run(batch)`` makes the output (default: ``model(**batch)``;
    ``seq2seq.generate`` passes ``model.generate``). Callers put the rows back in their order."""
    check_fits(model, encoded)
    model.eval()
    device = next(model.parameters()).device
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    inputs = [
        {k: v for k, v in encoded[i].items() if k in ("input_ids", "token_type_ids", "attention_mask")} for i in order
    ]
    done = 0
    for batch in batches(inputs, tokenizer, batch_size, collate=collate):
        size = len(batch["input_ids"])
        yield order[done : done + size], (run or (lambda b: model(**b)))({k: v.to(device) for k, v in batch.items()})
        done += size


# (encoder attribute, MLM head attribute) of the masked-LM classes whose head can score a subset of positions
_MLM_PARTS = (("bert", "cls"), ("albert", "predictions"))


def mlm_parts(model):
    """(encoder, MLM head) of a ``BertForMaskedLM`` or ``AlbertForMaskedLM``, so that a caller can project only the
    positions it needs onto the vocabulary; None for other models."""
    for encoder, head in _MLM_PARTS:
        if hasattr(model, encoder) and hasattr(model, head):
            return getattr(model, encoder), getattr(model, head)
    return None


def logits_at(model, inputs: dict, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """A masked LM's vocabulary logits at positions ``(rows[i], cols[i])`` of a batch (``inputs``: ``input_ids`` [B, T]
    and the model's other inputs) -> [N, V]. BERT and ALBERT project only those N rows onto the vocabulary (hidden
    [B, T, H] -> [N, H] -> [N, V], lesson 02's shortcut); other masked LMs run their whole head."""
    parts = mlm_parts(model)
    if parts is None:
        return model(**inputs).logits[rows, cols]
    encoder, head = parts
    return head(encoder(**inputs).last_hidden_state[rows, cols])


def _body(model) -> torch.nn.Module:
    """The pretrained encoder of a ``PooledClassifier`` (``.encoder``) or of a Hugging Face ``...ForMaskedLM``
    (``.base_model``, e.g. ``BertForMaskedLM.bert``)."""
    if isinstance(getattr(getattr(model, "encoder", None), "encoder", None), torch.nn.Module):
        return model.encoder
    base = getattr(model, "base_model", None)
    if base is not None and base is not model and hasattr(getattr(base, "encoder", None), "layer"):
        return base
    raise TypeError(
        f"Cannot find the transformer layers of a {type(model).__name__}: expected a PooledClassifier on a BERT-like "
        "encoder (.encoder.encoder.layer) or a masked LM such as BertForMaskedLM (.bert.encoder.layer)."
    )


def _encoder_layers(model) -> torch.nn.ModuleList:
    return _body(model).encoder.layer


def train_only(model, top_layers: int | None, layer_norms: bool = False) -> int:
    """Selective fine-tuning of a ``PooledClassifier`` or a masked LM (lesson 08's PET): freeze the encoder except its
    ``top_layers`` last layers (and, with ``layer_norms``, every LayerNorm); the head always trains (an MLM head's
    decoder is tied to the frozen word embeddings and stays frozen with them). ``top_layers=None`` trains everything,
    embeddings included (full fine-tuning). Returns the number of trainable parameters."""
    if top_layers is None:
        model.requires_grad_(True)
        return sum(p.numel() for p in model.parameters())
    layers = _encoder_layers(model)
    if not isinstance(top_layers, int) or not 0 <= top_layers <= len(layers):
        raise ValueError(
            f"top_layers={top_layers!r}: the encoder has {len(layers)} layers. "
            f"Accepted: None (everything) or an int from 0 (head only) to {len(layers)}."
        )
    body = _body(model)
    model.requires_grad_(True)
    body.requires_grad_(False)
    for layer in list(layers)[len(layers) - top_layers :]:
        layer.requires_grad_(True)
    if layer_norms:
        for module in body.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.requires_grad_(True)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
