"""Tests run offline, in the quick profile, quietly; notebook kernels started by nbval inherit this environment."""
import os

os.environ.setdefault("COURSE_PROFILE", "quick")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("COURSE_QUIET", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def tokenizer():
    """The packaged all-MiniLM-L6-v2 tokenizer: bert-base-uncased's 30,522-piece WordPiece vocabulary."""
    from course_utils import load_tokenizer

    return load_tokenizer("sentence-transformers/all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def sentences():
    """3,000 real SST-2 training sentences from the mirror."""
    from course_utils import load_dataset

    return load_dataset("nyu-mll/glue", "sst2", split="train")["sentence"][:3000]
