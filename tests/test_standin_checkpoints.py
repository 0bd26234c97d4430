"""Stand-ins for the full profile's checkpoints (the rehearsal), and the rehearsal's own refusals."""

import json

import pytest
import torch

from course_tools import standin_checkpoints
from course_utils.profiles import PROFILES


def test_an_unknown_stand_in_is_refused_before_anything_is_built(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"No stand-in for 'bert-large-uncased'.*Accepted: bert-base-uncased, "
        r"t5-small, facebook/bart-base",
    ):
        standin_checkpoints.build_all(tmp_path, ["t5-small", "bert-large-uncased"])
    assert list(tmp_path.iterdir()) == []


def test_the_rehearsal_stands_in_for_exactly_the_full_profiles_hub_checkpoints():
    from course_tools.rehearsal import hub_checkpoints

    assert hub_checkpoints(PROFILES["rehearsal"]) == ["bert-base-uncased", "t5-small", "facebook/bart-base"]
    assert hub_checkpoints(PROFILES["quick"]) == []


def test_a_rehearsal_without_the_mirror_says_what_it_needs(monkeypatch, tmp_path):
    from course_tools.rehearsal import require_mirror

    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(SystemExit, match="needs the offline mirror.*COURSE_DATA_DIR"):
        require_mirror()


@pytest.fixture(scope="module")
def cache(tmp_path_factory, sentences):
    """BERT and T5 stand-ins built from 3,000 SST-2 sentences (the books are the real recipe; this is faster)."""
    root = tmp_path_factory.mktemp("hf-cache")
    for name in ["bert-base-uncased", "t5-small"]:
        standin_checkpoints.build_standin(standin_checkpoints.standin(name), root, list(sentences))
    return root


def test_a_stand_in_keeps_the_real_architecture_and_depth_and_narrows_the_width(cache):
    from transformers import AutoConfig

    folder = standin_checkpoints.snapshot_dir(cache, standin_checkpoints.standin("bert-base-uncased"))
    config = AutoConfig.from_pretrained(folder)
    assert (config.model_type, config.num_hidden_layers, config.max_position_embeddings) == ("bert", 12, 512)
    assert config.hidden_size == 64 and config.num_attention_heads == 4
    assert (folder.parent.parent / "refs" / "main").read_text() == folder.name  # a download's cache layout
    note = json.loads((folder / standin_checkpoints.MARKER).read_text())
    assert "RANDOM weights" in note["description"] and "not the pretrained model" in note["description"]


def test_stand_in_tokenizers_have_the_real_kinds_special_ids(cache):
    from transformers import AutoTokenizer

    bert = AutoTokenizer.from_pretrained(
        standin_checkpoints.snapshot_dir(cache, standin_checkpoints.standin("bert-base-uncased"))
    )
    assert [bert.pad_token_id, bert.unk_token_id, bert.cls_token_id, bert.sep_token_id, bert.mask_token_id] == [
        0,
        100,
        101,
        102,
        103,
    ]
    t5 = AutoTokenizer.from_pretrained(standin_checkpoints.snapshot_dir(cache, standin_checkpoints.standin("t5-small")))
    assert (t5.pad_token_id, t5.eos_token_id, t5.unk_token_id) == (0, 1, 2)
    assert t5.convert_tokens_to_ids("<extra_id_0>") == len(t5) - 1 and t5("a movie")["input_ids"][-1] == 1


def test_the_resolver_finds_a_stand_in_by_hub_name_and_labels_it(cache, monkeypatch):
    import huggingface_hub.constants
    from transformers import AutoModelForMaskedLM

    from course_utils.resources import resolve_checkpoint

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    found = resolve_checkpoint("bert-base-uncased")
    assert found.source == "stand-in" and found.detail.startswith("REHEARSAL STAND-IN for bert-base-uncased")
    model = AutoModelForMaskedLM.from_pretrained(found.location)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([[101, 103, 102]])).logits
    assert logits.shape == (1, 3, model.config.vocab_size) and torch.isfinite(logits).all()


def test_load_seq2seq_gives_a_generating_model_and_its_tokenizer(cache, monkeypatch, capsys):
    """By hub name, through the resolver (here the T5 stand-in in a Hugging Face cache): the seq2seq class, a
    tokenizer that ends inputs with </s>, and generation that starts from the model's decoder start token."""
    import huggingface_hub.constants
    from transformers import T5ForConditionalGeneration

    from course_utils.seq2seq import decoder_start, load_seq2seq

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    model, tokenizer = load_seq2seq("t5-small")
    assert isinstance(model, T5ForConditionalGeneration)
    assert "[model] t5-small <- REHEARSAL STAND-IN for t5-small" in capsys.readouterr().out
    inputs = tokenizer(["summarize: a movie about a dog"], return_tensors="pt")
    assert inputs["input_ids"][0, -1] == tokenizer.eos_token_id
    out = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert out.shape[0] == 1 and 2 <= out.shape[1] <= 5 and out[0, 0] == decoder_start(model)
