import pytest
import torch
from transformers import BertForMaskedLM

from course_utils.masking import mask_tokens
from course_utils.packing import pack_blocks
from course_utils.pretraining import (
    BertSize,
    bert_config,
    check_blocks_fit,
    heldout_loss,
    masked_lm_loss,
    non_embedding_parameters,
    pretrain_mlm,
)
from course_utils.wordpiece import train_wordpiece

SIZE = BertSize(hidden=32, layers=1, heads=2, intermediate=64)


@pytest.fixture(scope="module")
def corpus(sentences):
    tok = train_wordpiece(sentences, 500)
    blocks = pack_blocks(sentences[:1500], tok, 32)
    return tok, blocks[:-8], blocks[-8:]


def tiny_model(tok, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    return BertForMaskedLM(bert_config(len(tok), SIZE, 32, dropout))


def test_masked_only_loss_equals_the_full_logits_loss(corpus):
    tok, blocks, _ = corpus
    model = tiny_model(tok).eval()
    batch = mask_tokens(blocks[:16], tok, generator=torch.Generator().manual_seed(0))
    fast = masked_lm_loss(model, batch.input_ids, batch.labels)
    full = model(input_ids=batch.input_ids, labels=batch.labels).loss
    torch.testing.assert_close(fast, full, rtol=1e-5, atol=1e-6)
    grads = []
    for loss_fn in (
        lambda: masked_lm_loss(model, batch.input_ids, batch.labels),
        lambda: model(input_ids=batch.input_ids, labels=batch.labels).loss,
    ):
        model.zero_grad()
        loss_fn().backward()
        grads.append(model.bert.embeddings.word_embeddings.weight.grad.clone())
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-7)


def test_a_padded_batch_scores_each_example_as_if_alone(corpus):
    """With its attention mask, a short example padded beside a long one gets the loss it has alone; without the mask
    the padding changes it (every position attends to the [PAD] tokens)."""
    tok, blocks, _ = corpus
    model = tiny_model(tok).eval()
    batch = mask_tokens(blocks[:2], tok, generator=torch.Generator().manual_seed(0))
    ids, labels = batch.input_ids.clone(), batch.labels.clone()
    ids[1, 20:], labels[1, 20:] = tok.pad_token_id, -100  # example 1: 20 tokens, then padding
    mask = (ids != tok.pad_token_id).long()
    labels[0] = -100  # score example 1 only
    assert (labels[1] != -100).any()
    alone = masked_lm_loss(model, ids[1:, :20], labels[1:, :20])
    padded = masked_lm_loss(model, ids, labels, attention_mask=mask)
    torch.testing.assert_close(padded, alone, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(
        padded, model(input_ids=ids, attention_mask=mask, labels=labels).loss, rtol=1e-5, atol=1e-6
    )
    assert abs(masked_lm_loss(model, ids, labels).item() - alone.item()) > 1e-4


@pytest.mark.parametrize("architecture", ["albert", "electra"])
def test_other_masked_lms_give_their_own_loss(corpus, architecture):
    """ALBERT takes the masked-rows shortcut; a model without one (ELECTRA's generator) falls back to its own loss."""
    from transformers import AlbertConfig, AlbertForMaskedLM, ElectraConfig, ElectraForMaskedLM

    tok, blocks, _ = corpus
    shape = dict(
        vocab_size=len(tok),
        embedding_size=16,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    torch.manual_seed(0)
    model = (
        AlbertForMaskedLM(AlbertConfig(**shape))
        if architecture == "albert"
        else ElectraForMaskedLM(ElectraConfig(**shape))
    ).eval()
    batch = mask_tokens(blocks[:16], tok, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(
        masked_lm_loss(model, batch.input_ids, batch.labels),
        model(input_ids=batch.input_ids, labels=batch.labels).loss,
        rtol=1e-5,
        atol=1e-6,
    )


def test_config_and_parameter_counts():
    cfg = bert_config(30522, BertSize(768, 12, 12, 3072), 512)
    with torch.device("meta"):
        model = BertForMaskedLM(cfg)
    assert 84e6 < non_embedding_parameters(model) < 86e6  # bert-base: 110 M in all, 85 M outside the embeddings
    with pytest.raises(ValueError, match="divisible by heads"):
        bert_config(100, BertSize(30, 1, 4, 60), 16)


def test_blocks_that_do_not_fit_are_refused(corpus):
    tok, blocks, _ = corpus
    model = tiny_model(tok)
    with pytest.raises(ValueError, match="do not fit the model's 16 position embeddings"):
        check_blocks_fit(BertForMaskedLM(bert_config(len(tok), SIZE, 16)), blocks, 4)
    with pytest.raises(ValueError, match="tokenizer and the model do not belong together"):
        check_blocks_fit(model, blocks + 10_000, 4)
    with pytest.raises(ValueError, match="batch_size must be an int between 1 and the number of blocks"):
        check_blocks_fit(model, blocks[:3], 4)
    with pytest.raises(ValueError, match="LongTensor"):
        check_blocks_fit(model, blocks.float(), 4)


def test_pretraining_lowers_heldout_loss_reproducibly(corpus):
    tok, train, held = corpus
    runs = []
    for _ in range(2):
        model = tiny_model(tok)
        runs.append(
            pretrain_mlm(
                model, tok, train, held, steps=80, batch_size=8, lr=5e-3, warmup_steps=8, eval_every=40, progress=False
            )
        )
    h = runs[0]
    assert h.eval_step == [0, 40, 80] and len(h.train_loss) == 80 == len(h.lr)
    assert h.eval_loss[-1] < 0.9 * h.eval_loss[0]  # down to about the unigram level of a 500-piece vocabulary
    assert h.eval_loss == runs[1].eval_loss  # seeded: reruns are identical
    assert h.tokens_per_second > 0 and h.non_embedding_params == non_embedding_parameters(model)


def test_warmup_then_linear_decay(corpus):
    tok, train, held = corpus
    h = pretrain_mlm(
        tiny_model(tok),
        tok,
        train,
        held,
        steps=20,
        batch_size=4,
        lr=1e-3,
        warmup_steps=5,
        eval_every=20,
        progress=False,
    )
    lr = torch.tensor(h.lr)
    assert lr[0] == 0 and torch.isclose(lr.max(), torch.tensor(1e-3)) and int(lr.argmax()) == 5
    assert (lr[:6].diff() > 0).all() and (lr[5:].diff() < 0).all()
    torch.testing.assert_close(lr[:6], torch.linspace(0, 1e-3, 6, dtype=lr.dtype))


def test_heldout_loss_uses_fixed_masks(corpus):
    tok, _, held = corpus
    model = tiny_model(tok)
    assert heldout_loss(model, held, tok) == heldout_loss(model, held, tok)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"steps": 0}, "steps must be a positive int"),
        ({"warmup_steps": 50}, "warmup_steps must be between 0 and steps=10"),
        ({"eval_every": 0}, "eval_every must be a positive int"),
    ],
)
def test_bad_training_arguments(corpus, kwargs, message):
    tok, train, held = corpus
    args = dict(steps=10, batch_size=4, lr=1e-3, warmup_steps=1, eval_every=5, progress=False) | kwargs
    with pytest.raises(ValueError, match=message):
        pretrain_mlm(tiny_model(tok), tok, train, held, **args)


def test_mixed_precision_trains_in_bf16_on_a_cpu_and_still_learns(corpus):
    """The full profile's mixed precision, as the rehearsal runs it on a CPU: the encoder's matrix products come out
    in bf16 (autocast), the weights stay fp32, and the held-out loss still falls."""
    tok, train, held = corpus
    model = tiny_model(tok)
    seen = []
    model.bert.encoder.layer[0].intermediate.dense.register_forward_hook(
        lambda module, args, out: seen.append(out.dtype) if module.training else None
    )
    h = pretrain_mlm(
        model,
        tok,
        train,
        held,
        steps=40,
        batch_size=8,
        lr=5e-3,
        warmup_steps=4,
        eval_every=40,
        mixed_precision=True,
        progress=False,
    )
    assert set(seen) == {torch.bfloat16} and model.bert.embeddings.word_embeddings.weight.dtype == torch.float32
    assert h.eval_loss[-1] < h.eval_loss[0] - 0.5


def test_the_masked_lm_objective_is_one_module_whose_forward_is_the_masked_only_loss(corpus):
    from course_utils.pretraining import MaskedLMObjective

    tok, blocks, _ = corpus
    model = tiny_model(tok).eval()
    batch = mask_tokens(blocks[:8], tok, generator=torch.Generator().manual_seed(1))
    objective = MaskedLMObjective(model)
    assert set(dict(objective.named_parameters())) == {f"model.{n}" for n, _ in model.named_parameters()}
    torch.testing.assert_close(
        objective(batch.input_ids, batch.labels), masked_lm_loss(model, batch.input_ids, batch.labels)
    )


def test_sinusoidal_positions_make_a_shift_a_linear_map_and_keep_the_spread_asked_for():
    from transformers import BertForMaskedLM

    from course_utils.pretraining import BertSize, bert_config, sinusoidal_positions_

    model = BertForMaskedLM(bert_config(50, BertSize(32, 1, 2, 64), 40))
    sinusoidal_positions_(model, 4.0)
    table = model.bert.embeddings.position_embeddings.weight.detach()  # [40, 32]
    words = model.bert.embeddings.word_embeddings.weight.detach()
    assert table.std().item() == pytest.approx(4.0 * words.std().item(), rel=1e-4)
    before, after = table[:-3].double(), table[3:].double()  # positions p and p + 3
    shift = torch.linalg.lstsq(before, after).solution  # one matrix for every p
    assert torch.allclose(before @ shift, after, atol=1e-4 * after.abs().max().item())
    random = torch.randn_like(table).double()
    fit = torch.linalg.lstsq(random[:-3], random[3:]).solution
    assert not torch.allclose(random[:-3] @ fit, random[3:], atol=0.1)  # BERT's random start: no such map
    with pytest.raises(ValueError, match="scale must be a positive number"):
        sinusoidal_positions_(model, 0)
