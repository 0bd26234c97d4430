import pytest
import torch
from transformers import BertConfig, BertModel

from course_utils.finetuning import encode_task, predict, score, train_classifier
from course_utils.glue import load_glue
from course_utils.heads import PooledClassifier, pool


def tiny_encoder(tokenizer):
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=64))


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
    assert regressor.encoder is classifier.encoder            # the weights are shared, the settings are not
    ids = torch.tensor([[2, 5, 7]])
    assert regressor(ids, labels=torch.tensor([0.5])).loss.ndim == 0    # still the MSE of one output
