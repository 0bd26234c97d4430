import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification

from course_utils.finetuning import check_max_length, encode_task, predict, score, train_classifier
from course_utils.glue import load_glue
from course_utils.training import adamw, batches


def tiny_classifier(tokenizer, num_labels, positions=64):
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=positions,
        num_labels=num_labels,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(cfg)


@pytest.fixture(scope="module")
def mrpc(tokenizer):
    return encode_task(tokenizer, load_glue("mrpc", "validation").select(range(64)), "mrpc", 64)


def test_pairs_get_segment_ids_and_labels(tokenizer, mrpc):
    first = mrpc[0]
    sep = tokenizer.sep_token_id
    assert first["input_ids"][0] == tokenizer.cls_token_id and first["input_ids"].count(sep) == 2
    second_start = first["input_ids"].index(sep) + 1
    assert set(first["token_type_ids"][:second_start]) == {0} and set(first["token_type_ids"][second_start:]) == {1}
    assert all(len(e["input_ids"]) <= 64 for e in mrpc) and {e["labels"] for e in mrpc} <= {0, 1}


def test_batches_are_padded_to_their_own_longest(tokenizer, mrpc):
    seen = []
    for batch in batches(mrpc, tokenizer, 16, group_by_length=True):
        lengths = batch["attention_mask"].sum(dim=1)
        assert batch["input_ids"].shape[1] == int(lengths.max())
        seen += batch["input_ids"][:, 0].tolist()
    assert len(seen) == len(mrpc)  # every example once
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        next(batches(mrpc, tokenizer, 0))


def test_training_lowers_the_loss_and_scores_with_the_glue_metric(tokenizer):
    train = encode_task(tokenizer, load_glue("sst2", "train").select(range(64)), "sst2", 64)
    model = tiny_classifier(tokenizer, 2)
    losses = train_classifier(model, tokenizer, train, "sst2", epochs=30, lr=3e-3, batch_size=32, progress=False)
    assert len(losses) == 60 and np.mean(losses[-4:]) < 0.7 * np.mean(losses[:4])  # a small set is memorised
    logits = predict(model, tokenizer, train[:50])
    assert logits.shape == (50, 2)
    one_by_one = np.concatenate([predict(model, tokenizer, [e]) for e in train[:50]])
    np.testing.assert_allclose(logits, one_by_one, atol=1e-5)  # rows come back in the order given
    assert set(score(logits, train[:50], "sst2")) == {"accuracy"}


def test_regression_for_stsb(tokenizer):
    data = encode_task(tokenizer, load_glue("stsb", "validation").select(range(64)), "stsb", 64)
    assert isinstance(data[0]["labels"], float)
    model = tiny_classifier(tokenizer, 1)
    train_classifier(model, tokenizer, data, "stsb", epochs=1, batch_size=32, progress=False)
    assert set(score(predict(model, tokenizer, data), data, "stsb")) == {"pearsonr", "spearmanr"}


def test_mismatches_are_refused(tokenizer, mrpc):
    with pytest.raises(ValueError, match="num_labels=3, but GLUE mrpc needs 2 labels"):
        train_classifier(tiny_classifier(tokenizer, 3), tokenizer, mrpc, "mrpc", progress=False)
    with pytest.raises(ValueError, match="max_length=512 does not fit the model: it has 64 position embeddings"):
        check_max_length(tiny_classifier(tokenizer, 2), 512)
    long = encode_task(tokenizer, load_glue("mrpc", "validation").select(range(8)), "mrpc", 128)
    short_model = tiny_classifier(tokenizer, 2, positions=32)
    for fn in (
        lambda: predict(short_model, tokenizer, long),
        lambda: train_classifier(short_model, tokenizer, long, "mrpc", progress=False),
    ):
        with pytest.raises(ValueError, match=r"tokens but the model has only 32 position embeddings"):
            fn()


def test_the_trainer_with_transformers_5_arguments(tokenizer, mrpc, tmp_path):
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from course_utils.finetuning import trainer_metrics

    args = TrainingArguments(
        output_dir=str(tmp_path),
        eval_strategy="epoch",
        num_train_epochs=1,
        per_device_train_batch_size=16,
        learning_rate=1e-3,
        warmup_steps=0.1,
        train_sampling_strategy="group_by_length",
        report_to="none",
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
        use_cpu=True,
        seed=0,
    )
    trainer = Trainer(
        model=tiny_classifier(tokenizer, 2),
        args=args,
        train_dataset=mrpc,
        eval_dataset=mrpc,
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=trainer_metrics("mrpc"),
    )
    trainer.train()
    scores = trainer.evaluate()
    from sklearn.metrics import accuracy_score, f1_score

    guesses, truth = trainer.predict(mrpc).predictions.argmax(-1), [e["labels"] for e in mrpc]
    assert scores["eval_f1"] == pytest.approx(f1_score(truth, guesses))
    assert scores["eval_accuracy"] == pytest.approx(accuracy_score(truth, guesses))


def test_fine_tune_trains_token_classification_and_forward_rows_restores_each_sentence(tokenizer):
    from transformers import BertForTokenClassification, DataCollatorForTokenClassification

    from course_utils.finetuning import fine_tune, forward_rows
    from course_utils.token_classification import encode_words, word_predictions

    words = [["Paris", "is", "in", "France", "."], ["John", "Smith", "visited", "Berlin"], ["nothing", "here"]] * 8
    tags = [[1, 0, 0, 1, 0], [2, 2, 0, 1], [0, 0]] * 8
    features, word_ids = encode_words(tokenizer, words, tags, 32)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=3,
    )
    model = BertForTokenClassification(cfg)
    collate = DataCollatorForTokenClassification(tokenizer)
    losses = fine_tune(model, tokenizer, features, epochs=40, lr=3e-3, batch_size=8, collate=collate, progress=False)
    assert len(losses) == 120 and np.mean(losses[-3:]) < 0.2 * np.mean(losses[:3])
    rows = forward_rows(model, tokenizer, features, collate=collate)["logits"]
    assert [r.shape for r in rows] == [(len(f["input_ids"]), 3) for f in features]  # unpadded, in the given order
    alone = forward_rows(model, tokenizer, features[1:2], collate=collate)["logits"][0]
    np.testing.assert_allclose(rows[1], alone, atol=1e-5)
    assert word_predictions(rows[1], word_ids[1]) == tags[1]  # the memorised tags come back per word


def test_forward_rows_gives_start_and_end_logits_for_question_answering(tokenizer):
    from transformers import BertForQuestionAnswering

    from course_utils.finetuning import fine_tune, forward_rows

    enc = tokenizer(["who?", "where is it?"], ["Ann wrote it.", "It is in a box on the shelf."])
    features = [
        {
            "input_ids": enc["input_ids"][i],
            "token_type_ids": enc["token_type_ids"][i],
            "start_positions": 4,
            "end_positions": 4,
        }
        for i in range(2)
    ]
    cfg = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    model = BertForQuestionAnswering(cfg)
    assert len(fine_tune(model, tokenizer, features, epochs=2, batch_size=2, progress=False)) == 2
    out = forward_rows(model, tokenizer, features, outputs=("start_logits", "end_logits"))
    assert [len(r) for r in out["start_logits"]] == [len(f["input_ids"]) for f in features]
    assert [len(r) for r in out["end_logits"]] == [len(f["input_ids"]) for f in features]
    with pytest.raises(ValueError, match="No training examples"):
        fine_tune(model, tokenizer, [], progress=False)


def test_adamw_decays_matrices_and_by_choice_vectors_and_updates_like_the_plain_one():
    """With no gradient, a step only applies the decoupled weight decay: a matrix shrinks by lr * weight_decay; a
    bias (or LayerNorm weight) does not by default (BERT's convention), and does with decay_vectors=True. With
    gradients, the fused update equals torch's plain AdamW set up with the same two parameter groups."""
    for decay_vectors in (True, False):
        torch.manual_seed(0)
        matrix, bias = torch.randn(7, 5, requires_grad=True), torch.randn(5, requires_grad=True)
        before = (matrix.detach().clone(), bias.detach().clone())
        optimizer = adamw([matrix, bias], lr=0.1, weight_decay=0.5, decay_vectors=decay_vectors)
        matrix.grad, bias.grad = torch.zeros_like(matrix), torch.zeros_like(bias)
        optimizer.step()
        torch.testing.assert_close(matrix.detach(), before[0] * (1 - 0.1 * 0.5))
        torch.testing.assert_close(bias.detach(), before[1] * (1 - 0.1 * 0.5) if decay_vectors else before[1])

    weights = [torch.randn(7, 5, requires_grad=True), torch.randn(5, requires_grad=True)]
    twins = [w.detach().clone().requires_grad_(True) for w in weights]
    start = weights[0].detach().clone()
    ours = adamw(weights, lr=1e-2)
    plain = torch.optim.AdamW(
        [{"params": twins[:1], "weight_decay": 0.01}, {"params": twins[1:], "weight_decay": 0.0}], lr=1e-2
    )
    for _ in range(5):
        for params, opt in [(weights, ours), (twins, plain)]:
            opt.zero_grad()
            (params[0].sin().sum() + params[1].pow(2).sum()).backward()
            opt.step()
    for a, b in zip(weights, twins):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(weights[0], start), "five steps must move the parameters"
