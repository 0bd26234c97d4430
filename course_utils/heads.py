"""A sentence (or sentence-pair) classifier on any encoder: pool the token vectors, then one linear layer.

Lesson 03a writes this head by hand; 03b, 07 and 08 reuse this tested copy (08 its ``pool``). Mean pooling suits
encoders trained to make mean-pooled vectors meaningful (sentence-transformers models such as all-MiniLM-L6-v2); CLS
pooling suits BERT as pretrained with next-sentence prediction. ``num_labels=1`` makes it a regressor (mean-squared
error), like ``AutoModelForSequenceClassification``. It returns a ``SequenceClassifierOutput``, so the course's loop,
``predict`` and transformers' ``Trainer`` all take it.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoModel
from transformers.modeling_outputs import SequenceClassifierOutput

from .resources import load_model

POOLINGS = ("cls", "mean")


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, pooling: str) -> torch.Tensor:
    """hidden [B, T, H], attention_mask [B, T] -> one vector per sequence [B, H]: position 0, or the mean of the
    real (unpadded) tokens."""
    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "mean":
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)  # [B, T, 1]
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}; got {pooling!r}.")


class PooledClassifier(nn.Module):
    """encoder -> pooling -> dropout -> linear: input_ids [B, T] -> logits [B, num_labels]."""

    def __init__(self, encoder: nn.Module, num_labels: int, pooling: str = "mean", dropout: float = 0.1):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}; got {pooling!r}.")
        if not isinstance(num_labels, int) or num_labels < 1:
            raise ValueError(f"num_labels must be a positive int (1 for regression); got {num_labels!r}.")
        self.encoder, self.pooling = encoder, pooling
        # max_position_embeddings for the length checks; num_labels for the task check. A copy, so that a second
        # head on the same encoder (intermediate-task transfer) does not change the first one's loss.
        self.config = copy.copy(encoder.config)
        self.config.num_labels = num_labels
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None) -> SequenceClassifierOutput:
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state  # [B, T, H]
        logits = self.head(self.dropout(pool(hidden, attention_mask, self.pooling)))  # [B, C]
        loss = None
        if labels is not None:
            if self.config.num_labels == 1:
                loss = F.mse_loss(logits[:, 0], labels.to(logits.dtype))
            else:
                loss = F.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


def pooled_classifier(name: str, num_labels: int, pooling: str = "mean", dropout: float = 0.1) -> PooledClassifier:
    """A ``PooledClassifier`` on the pretrained encoder ``name``, loaded through the course resolver."""
    return PooledClassifier(load_model(AutoModel, name), num_labels, pooling, dropout)
