"""Shared fixtures. The environment every test runs in (offline, quick, the hub's stand-in) is set in ../conftest.py."""

import pytest


@pytest.fixture(scope="session")
def tokenizer():
    """The packaged all-MiniLM-L6-v2 tokenizer: bert-base-uncased's 30,522-piece WordPiece vocabulary."""
    from course_utils import load_tokenizer

    return load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def sentences():
    """3,000 real SST-2 training sentences (from the hub's stand-in)."""
    from course_utils import load_dataset

    return load_dataset("nyu-mll/glue", "sst2", split="train")["sentence"][:3000]


@pytest.fixture(scope="session")
def tiny_mlm(tokenizer):
    """An untrained 2-layer BertForMaskedLM on the MiniLM vocabulary: cheap, deterministic, for MLM-head plumbing."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return BertForMaskedLM(cfg).eval()


@pytest.fixture(autouse=True)
def _resources_announce_afresh():
    """The resolver says where a resource came from once per process; each test is its own 'process' for that."""
    from course_utils import resources

    resources._announced.clear()
    yield
