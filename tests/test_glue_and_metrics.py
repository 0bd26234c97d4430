import pytest

from course_utils.glue import GLUE_TASKS, check_num_labels, glue_table, glue_task, load_glue
from course_utils.metrics import load_metric


def test_the_nine_tasks():
    assert list(GLUE_TASKS) == ["cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli"]
    assert glue_task("STS-B").is_regression and glue_task("stsb").num_labels == 1
    assert glue_task("mnli").num_labels == 3 and glue_task("cola").metric == "matthews_correlation"
    table = glue_table()
    assert table.loc["mrpc", "metric"] == "f1, accuracy" and table.loc["mnli", "validation"] == 9815


@pytest.mark.parametrize("task", ["cola", "sst2", "mrpc", "stsb", "rte", "wnli"])
def test_mirror_tasks_load_with_the_documented_sizes_and_labels(task):
    t = glue_task(task)
    ds = load_glue(task, "validation")
    assert ds.num_rows == t.sizes["validation"]
    if not t.is_regression:
        assert tuple(ds.features["label"].names) == t.labels


def test_missing_tasks_and_bad_names_say_what_to_do():
    with pytest.raises(FileNotFoundError, match=r"GLUE task 'mnli' is not available here.*nyu-mll/glue config 'mnli'"):
        load_glue("mnli")
    with pytest.raises(FileNotFoundError, match=r"'qnli' \(split 'train'\)"):
        load_glue("qnli", "train")
    with pytest.raises(ValueError, match="Unknown GLUE task 'sst3'. Accepted: cola, sst2"):
        load_glue("sst3")
    with pytest.raises(ValueError, match="has no split 'dev'"):
        load_glue("rte", "dev")


def test_num_labels_must_fit_the_task():
    class Model:
        class config:
            num_labels = 2

    check_num_labels(Model, "rte")
    with pytest.raises(ValueError, match=r"num_labels=2, but GLUE mnli needs 3 labels.*num_labels=3"):
        check_num_labels(Model, "mnli")
    with pytest.raises(ValueError, match=r"stsb needs 1 output \(regression\)"):
        check_num_labels(Model, "stsb")


def test_metrics_use_evaluates_api_offline_and_agree_with_the_libraries():
    from scipy.stats import spearmanr
    from sklearn.metrics import f1_score, matthews_corrcoef

    pred, ref = [1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 1]
    assert load_metric("accuracy").compute(predictions=pred, references=ref) == {"accuracy": 4 / 6}
    mrpc = load_metric("glue", "mrpc").compute(predictions=pred, references=ref)
    assert mrpc == {"f1": pytest.approx(f1_score(ref, pred)), "accuracy": pytest.approx(4 / 6)}
    three = [0, 2, 1, 2, 2, 0], [0, 1, 1, 2, 2, 2]  # more than two classes: evaluate's f1 takes average=
    for average in ("micro", "macro"):
        assert load_metric("f1").compute(predictions=three[0], references=three[1], average=average)["f1"] == (
            pytest.approx(f1_score(three[1], three[0], average=average))
        )
    cola = load_metric("glue", "cola")
    for i in range(0, 6, 2):  # evaluate's incremental API
        cola.add_batch(predictions=pred[i : i + 2], references=ref[i : i + 2])
    assert cola.compute()["matthews_correlation"] == pytest.approx(matthews_corrcoef(ref, pred))
    scores, gold = [0.5, 2.0, 1.0, 4.5], [0.0, 2.5, 1.5, 5.0]
    assert load_metric("spearmanr").compute(predictions=scores, references=gold)["spearmanr"] == pytest.approx(
        spearmanr(scores, gold)[0]
    )


def test_unknown_metrics_are_refused():
    with pytest.raises(ValueError, match="No course metric 'bleu'. Accepted: accuracy, f1"):
        load_metric("bleu")
    with pytest.raises(ValueError, match="needs a GLUE task; got 'mnli-mm'"):
        load_metric("glue", "mnli-mm")


def test_the_metric_module_knows_each_task_by_the_same_metrics_as_glue_py():
    """course_scores.py is loaded by evaluate as a standalone file, so it keeps its own table; it must agree."""
    import importlib.util

    from course_utils.metrics import HERE, SCORES

    spec = importlib.util.spec_from_file_location("course_scores", HERE / "course_scores" / "course_scores.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.GLUE == {name: list(t.metrics) for name, t in GLUE_TASKS.items()}
    assert tuple(module.SCORES) == SCORES


def test_rouge_metric_on_hand_counted_overlaps():
    rouge = load_metric("rouge")
    scores = rouge.compute(predictions=["the cat sat"], references=["the cat sat on the mat"])
    assert scores["rouge1"] == pytest.approx(2 * 1 * 0.5 / 1.5)  # P 3/3, R 3/6
    assert scores["rouge2"] == pytest.approx(2 * 1 * 0.4 / 1.4)  # P 2/2, R 2/5
    assert scores["rougeL"] == pytest.approx(scores["rouge1"])  # the LCS is the whole prediction
    both = rouge.compute(
        predictions=["the cat sat", "a dog"],
        references=[["a bird flew", "the cat sat"], ["the dog"]],
        use_aggregator=False,
    )
    assert both["rouge1"] == pytest.approx([1.0, 0.5])  # the best of two references; P 1/2, R 1/2
    assert rouge.compute(predictions=["x"], references=["y"], rouge_types=["rougeL"]) == {"rougeL": 0.0}
    with pytest.raises(ValueError, match="Unknown ROUGE type"):
        rouge.compute(predictions=["x"], references=["y"], rouge_types=["rouge9"])
