"""Diagnostic classifiers on a frozen encoder's layers (lesson 06): what can a small probe read off each layer?

- ``word_features`` runs the encoder once and keeps every layer's vector of each word's first sub-token
  (Tenney et al., 2019 probe layer by layer); cache it once per model and train every probe on the cache.
- ``linear_probe`` / ``mlp_probe`` / ``ScalarMixProbe`` are the probes; ``fit_probe`` trains any of them, and
  ``probe_accuracy`` scores it on held-out words.
- The control task (Hewitt & Liang, 2019: every word type a random but fixed label drawn from the task's label
  distribution) is the lesson's Exercise 1, so it is not here; selectivity = task accuracy - control accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from .quiet import is_quiet


def flat_labels(sentences: Sequence[Sequence[str]], labels: Sequence[Sequence[int]]) -> torch.Tensor:
    """Per-sentence word labels -> one tensor [n_words], after checking each sentence has one label per word."""
    if len(sentences) != len(labels):
        raise ValueError(f"{len(sentences)} sentences but {len(labels)} label lists: they must pair up.")
    for i, (words, tags) in enumerate(zip(sentences, labels)):
        if len(words) != len(tags):
            raise ValueError(f"Sentence {i} has {len(words)} words but {len(tags)} labels: give one label per word.")
    return torch.tensor([t for tags in labels for t in tags], dtype=torch.long)


@torch.no_grad()
def word_features(
    model, tokenizer, sentences: Sequence[Sequence[str]], batch_size: int = 32, progress: bool | None = None
) -> torch.Tensor:
    """Every layer's vector for each word's first sub-token -> [n_words, n_layers + 1, hidden] (layer 0 is the
    embedding layer), words in sentence order. ``sentences`` are pre-split words (e.g. UD or CoNLL tokens).
    A sentence longer than the model's positions is an error, not a silent truncation."""
    if not sentences or any(len(s) == 0 for s in sentences):
        raise ValueError("word_features needs non-empty sentences (lists of words).")
    limit = getattr(model.config, "max_position_embeddings", None)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    # Batches of similar length waste little on padding (lesson 03a); the vectors go back in sentence order
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out: list[torch.Tensor | None] = [None] * len(sentences)
    starts = range(0, len(sentences), batch_size)
    for start in tqdm(starts, desc="encoding words", disable=is_quiet() if progress is None else not progress):
        chosen = order[start : start + batch_size]
        chunk = [list(sentences[i]) for i in chosen]
        enc = tokenizer(chunk, is_split_into_words=True, padding=True, return_tensors="pt")
        if limit is not None and enc["input_ids"].shape[1] > limit:
            longest = chosen[int(enc["attention_mask"].sum(1).argmax())]
            raise ValueError(
                f"Sentence {longest} needs {enc['input_ids'].shape[1]} positions; the model has {limit}. "
                "Drop or split long sentences first."
            )
        hidden = model(**enc.to(device), output_hidden_states=True).hidden_states  # (L+1) x [B, T, H]
        stacked = torch.stack(hidden, dim=2)  # [B, T, L+1, H]
        for b in range(len(chunk)):
            firsts, seen = [], set()
            for position, word in enumerate(enc.word_ids(b)):
                if word is not None and word not in seen:
                    seen.add(word)
                    firsts.append(position)
            if len(firsts) != len(chunk[b]):
                raise ValueError(
                    f"Sentence {chosen[b]}: {len(chunk[b])} words but {len(firsts)} reached the "
                    "model (a word with no word pieces?)."
                )
            out[chosen[b]] = stacked[b, firsts].float().cpu()
    model.train(was_training)
    return torch.cat(out)


def layer(features: torch.Tensor, index: int) -> torch.Tensor:
    """One layer of ``word_features`` output [n_words, L+1, H] -> [n_words, H]; negative indices count from the top."""
    n = features.shape[1]
    if not isinstance(index, int) or not -n <= index < n:
        raise IndexError(
            f"Layer {index!r} out of range: these features have layers 0 (embeddings) to {n - 1} (or -{n} to -1)."
        )
    return features[:, index]


def linear_probe(hidden: int, num_labels: int) -> nn.Module:
    """A linear map from one layer's vector to label logits: [*, hidden] -> [*, num_labels]."""
    return nn.Linear(hidden, num_labels)


def mlp_probe(hidden: int, num_labels: int, width: int = 256) -> nn.Module:
    """A one-hidden-layer MLP probe: [*, hidden] -> [*, num_labels]. More expressive, so less selective."""
    return nn.Sequential(nn.Linear(hidden, width), nn.ReLU(), nn.Linear(width, num_labels))


class ScalarMixProbe(nn.Module):
    """ELMo's scalar mix (Peters et al., 2018) under a linear probe: softmax weights over layers, one scale.
    [*, L+1, hidden] -> [*, num_labels]; ``weights()`` says which layers the task draws on."""

    def __init__(self, n_layers: int, hidden: int, num_labels: int):
        super().__init__()
        self.mix = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))
        self.linear = nn.Linear(hidden, num_labels)

    def weights(self) -> np.ndarray:
        return self.mix.detach().softmax(0).cpu().numpy()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        mixed = self.gamma * torch.einsum("l,...lh->...h", self.mix.softmax(0), features)
        return self.linear(mixed)


def fit_probe(
    probe: nn.Module,
    features: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int = 5,
    lr: float = 1e-2,
    batch_size: int = 512,
    weight_decay: float = 0.0,
    seed: int = 0,
) -> list[float]:
    """Train ``probe`` with Adam and cross-entropy on (features [N, ...], labels [N]); returns each step's loss.
    The encoder is not involved: features are the cached vectors."""
    if features.shape[0] != labels.shape[0]:
        raise ValueError(f"{features.shape[0]} feature rows but {labels.shape[0]} labels: one label per word.")
    if features.shape[0] == 0:
        raise ValueError("No words to train the probe on.")
    g = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(probe.parameters(), lr=lr, weight_decay=weight_decay)
    losses = []
    probe.train()
    for _ in range(epochs):
        order = torch.randperm(features.shape[0], generator=g)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            loss = nn.functional.cross_entropy(probe(features[idx]), labels[idx])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
    probe.eval()
    return losses


@torch.no_grad()
def probe_accuracy(probe: nn.Module, features: torch.Tensor, labels: torch.Tensor, batch_size: int = 4096) -> float:
    """Share of words whose label the probe gets right."""
    if features.shape[0] != labels.shape[0] or features.shape[0] == 0:
        raise ValueError(
            f"Need as many labels as feature rows (and at least one); got {features.shape[0]} rows, "
            f"{labels.shape[0]} labels."
        )
    probe.eval()
    correct = sum(
        int((probe(features[s : s + batch_size]).argmax(-1) == labels[s : s + batch_size]).sum())
        for s in range(0, features.shape[0], batch_size)
    )
    return correct / features.shape[0]


def majority_accuracy(train_labels: torch.Tensor, eval_labels: torch.Tensor) -> float:
    """Accuracy of always answering the most frequent training label."""
    top = int(torch.bincount(train_labels).argmax())
    return float((eval_labels == top).float().mean())
