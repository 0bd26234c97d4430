import pytest
import torch
from transformers import BertConfig, BertModel, T5Config

from course_utils.seq2seq import encode_pairs, generate, seq2seq_loss, source_prefix, warm_start


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, tokenizer):
    """A 2-layer BERT with the MiniLM vocabulary, saved as a checkpoint folder."""
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-bert")
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(cfg).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def model(tiny_bert):
    model, _ = warm_start(tiny_bert, decoder_layers=1)
    return model.eval()


def test_warm_start_builds_a_causal_decoder_with_cross_attention(model, tokenizer):
    dec = model.decoder.config
    assert dec.is_decoder and dec.add_cross_attention and dec.num_hidden_layers == 1
    assert model.encoder.config.num_hidden_layers == 2
    gen = model.generation_config
    assert (gen.decoder_start_token_id, gen.eos_token_id, gen.pad_token_id) == (
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
        tokenizer.pad_token_id,
    )


def test_decoder_positions_never_see_later_tokens_but_encoder_positions_do(model):
    src = torch.tensor([[101, 2023, 2003, 1037, 3231, 102]])
    dec = torch.tensor([[101, 2307, 2154, 2000]])
    changed = dec.clone()
    changed[0, -1] = 4248
    with torch.no_grad():
        a = model(input_ids=src, decoder_input_ids=dec).logits
        b = model(input_ids=src, decoder_input_ids=changed).logits
        src2 = src.clone()
        src2[0, -2] = 4248
        h1 = model.encoder(input_ids=src).last_hidden_state
        h2 = model.encoder(input_ids=src2).last_hidden_state
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6) and not torch.allclose(a[:, -1], b[:, -1])
    assert not torch.allclose(h1[:, 1], h2[:, 1])  # bidirectional: an early position sees a later change


def test_encode_pairs_drops_the_start_token_and_ends_with_eos(model, tokenizer):
    rows = encode_pairs(
        tokenizer,
        model,
        ["Please send the revised contract by Friday."] * 2,
        ["Revised contract", "one two three four five six seven eight"],
        max_source_length=6,
        max_target_length=4,
    )
    assert len(rows[0]["input_ids"]) == 6
    assert rows[0]["labels"] == tokenizer("revised contract", add_special_tokens=False)["input_ids"] + [102]
    assert len(rows[1]["labels"]) == 4 and rows[1]["labels"][-1] == tokenizer.sep_token_id
    assert all(tokenizer.cls_token_id not in r["labels"] for r in rows)


@pytest.mark.parametrize(
    "sources, targets, match",
    [
        (["an email", "  "], ["a", "b"], "Empty source"),
        (["an email"], [""], "Empty target"),
        (["an email", "another"], ["a"], "2 sources but 1 targets"),
    ],
)
def test_encode_pairs_refuses_bad_input(model, tokenizer, sources, targets, match):
    with pytest.raises(ValueError, match=match):
        encode_pairs(tokenizer, model, sources, targets, max_source_length=16, max_target_length=8)


def test_loss_is_per_token_whatever_the_batching(model, tokenizer):
    rows = encode_pairs(
        tokenizer,
        model,
        ["short", "a much longer email about the meeting on monday", "hello there"],
        ["hi", "meeting moved to tuesday afternoon", "hello"],
        max_source_length=32,
        max_target_length=8,
    )
    assert seq2seq_loss(model, tokenizer, rows, batch_size=1) == pytest.approx(
        seq2seq_loss(model, tokenizer, rows, batch_size=3), rel=1e-5
    )


def test_generate_keeps_the_order_of_the_sources(model, tokenizer):
    rows = encode_pairs(
        tokenizer,
        model,
        ["a much longer email about the meeting on monday", "short"],
        ["x", "y"],
        max_source_length=32,
        max_target_length=8,
    )
    together = generate(model, tokenizer, rows, max_new_tokens=5)
    alone = [generate(model, tokenizer, [r], max_new_tokens=5)[0] for r in rows]
    assert together == alone and all(isinstance(t, str) for t in together)


def test_warm_start_refuses_what_it_cannot_copy(tiny_bert, tmp_path):
    with pytest.raises(ValueError, match="decoder_layers=3"):
        warm_start(tiny_bert, decoder_layers=3)
    T5Config(d_model=16, num_layers=1, num_heads=2, d_kv=8, d_ff=32, vocab_size=100).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="'t5' model"):
        warm_start(str(tmp_path))


def test_t5_asks_for_its_task_prefix():
    class Stub:
        config = T5Config()

    assert source_prefix(Stub()) == "summarize: "


def test_pairs_can_be_grouped_by_target_length(tokenizer):
    from course_utils.seq2seq import collator
    from course_utils.training import batches

    rng = torch.Generator().manual_seed(0)
    rows = [
        {
            "input_ids": [101] + [2000] * 30 + [102],
            "labels": [2000] * int(torch.randint(1, 20, (1,), generator=rng)) + [102],
        }
        for _ in range(256)
    ]

    def label_padding(**kwargs):
        padded = [
            b["labels"]
            for b in batches(rows, tokenizer, 16, group_by_length=True, collate=collator(tokenizer), **kwargs)
        ]
        assert sum(len(p) for p in padded) == len(rows)
        return sum(int((p == -100).sum()) for p in padded)

    assert label_padding(length_key="labels") < 0.3 * label_padding()
    with pytest.raises(KeyError, match="length_key='target'"):
        next(batches(rows, tokenizer, 16, group_by_length=True, length_key="target"))


def tiny_seq2seq(kind: str, tokenizer):
    """A randomly initialised BART or T5 over the MiniLM vocabulary, with the special tokens its family uses:
    BART starts outputs with its end token and keeps ``<s>`` (here [CLS]) in the labels; T5 starts with pad."""
    from transformers import BartConfig, BartForConditionalGeneration, T5ForConditionalGeneration

    torch.manual_seed(0)
    if kind == "bart":
        cfg = BartConfig(
            vocab_size=len(tokenizer),
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            max_position_embeddings=64,
            pad_token_id=0,
            bos_token_id=101,
            eos_token_id=102,
            decoder_start_token_id=102,
            forced_eos_token_id=None,
        )
        return BartForConditionalGeneration(cfg)
    cfg = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=102,
        decoder_start_token_id=0,
    )
    return T5ForConditionalGeneration(cfg)


@pytest.mark.parametrize("kind", ["bart", "t5"])
def test_hub_style_seq2seq_models_train_with_frozen_encoder_states(kind, tokenizer):
    """The lesson's loop on the full profile's model families: labels as the family wants them, encoder states
    computed once and passed as ``encoder_outputs``, loss that falls, text that comes out."""
    from transformers.modeling_outputs import BaseModelOutput

    from course_utils.seq2seq import collator
    from course_utils.training import adamw, batches

    model = tiny_seq2seq(kind, tokenizer)
    rows = encode_pairs(
        tokenizer,
        model,
        ["please send the contract", "lunch is at noon on friday"] * 4,
        ["contract", "lunch friday"] * 4,
        max_source_length=16,
        max_target_length=6,
    )
    assert rows[0]["labels"][0] != model.generation_config.decoder_start_token_id and rows[0]["labels"][-1] == 102
    batch = next(batches(rows, tokenizer, 8, collate=collator(tokenizer)))
    model.get_encoder().requires_grad_(False)
    with torch.no_grad():
        batch["encoder_outputs"] = BaseModelOutput(
            last_hidden_state=model.get_encoder()(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).last_hidden_state
        )
    optimizer = adamw([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    model.train()
    losses = []
    for _ in range(40):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    # BART and T5 share one embedding matrix between encoder, decoder and output layer, so freezing the encoder
    # freezes it too and the decoder learns more slowly; the loss must still fall.
    assert losses[-1] < 0.95 * losses[0]
    assert len(generate(model, tokenizer, rows[:2], max_new_tokens=4)) == 2


def test_lead_baseline():
    from course_utils.seq2seq import lead_baseline

    assert lead_baseline("Hi Sara,\n  the meeting   moved.", 3) == "Hi Sara, the"
    assert lead_baseline("Short.", 4) == "Short." and lead_baseline("a b", 0) == ""
    with pytest.raises(ValueError, match="0 or more"):
        lead_baseline("a b", -1)


def test_cross_attention_can_start_as_a_copy_of_self_attention(tiny_bert):
    model, _ = warm_start(tiny_bert, decoder_layers=2, cross_attention="self")
    for layer in model.decoder.base_model.encoder.layer:
        own, cross = layer.attention.state_dict(), layer.crossattention.state_dict()
        assert own.keys() == cross.keys()
        assert all(torch.equal(own[k], cross[k]) for k in own)
        cross["self.query.weight"].add_(1.0)  # a copy, not the same tensors: training one leaves the other
        assert not torch.equal(layer.attention.self.query.weight, layer.crossattention.self.query.weight)
    random_start, _ = warm_start(tiny_bert, decoder_layers=2)
    layer = random_start.decoder.base_model.encoder.layer[0]
    assert not torch.equal(layer.attention.self.query.weight, layer.crossattention.self.query.weight)


def test_warm_start_names_the_cross_attention_inits_it_accepts(tiny_bert):
    with pytest.raises(ValueError, match="accepted 'random', 'self'"):
        warm_start(tiny_bert, cross_attention="copy")


def test_warm_start_can_keep_only_the_lower_encoder_layers(tiny_bert):
    model, _ = warm_start(tiny_bert, encoder_layers=1, decoder_layers=2)
    assert model.encoder.config.num_hidden_layers == 1 and len(model.encoder.encoder.layer) == 1
    assert model.decoder.config.num_hidden_layers == 2
    with pytest.raises(ValueError, match="encoder_layers=0"):
        warm_start(tiny_bert, encoder_layers=0)
