"""Classification and regression scores for evaluate's API, computed by scikit-learn and scipy.

Loaded through ``course_utils.metrics.load_metric``; the config name picks the score (``accuracy``, ``f1``,
``matthews_correlation``, ``pearsonr``, ``spearmanr``) or a GLUE task (``glue-mrpc`` -> f1 and accuracy).
"""

import datasets
import evaluate
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

SCORES = {  # (predictions, references, average) -> scores; `average` matters to f1 only
    "accuracy": lambda p, r, average: {"accuracy": float(accuracy_score(r, p))},
    "f1": lambda p, r, average: {"f1": float(f1_score(r, p, average=average))},
    "matthews_correlation": lambda p, r, average: {"matthews_correlation": float(matthews_corrcoef(r, p))},
    "pearsonr": lambda p, r, average: {"pearsonr": float(pearsonr(p, r)[0])},
    "spearmanr": lambda p, r, average: {"spearmanr": float(spearmanr(p, r)[0])},
}
GLUE = {
    "cola": ["matthews_correlation"],
    "sst2": ["accuracy"],
    "mrpc": ["f1", "accuracy"],
    "qqp": ["f1", "accuracy"],
    "stsb": ["pearsonr", "spearmanr"],
    "mnli": ["accuracy"],
    "qnli": ["accuracy"],
    "rte": ["accuracy"],
    "wnli": ["accuracy"],
}
REGRESSION = {"pearsonr", "spearmanr", "glue-stsb"}


def parts(config_name):
    if config_name in SCORES:
        return [config_name]
    if config_name.startswith("glue-") and config_name[5:] in GLUE:
        return GLUE[config_name[5:]]
    accepted = ", ".join(list(SCORES) + [f"glue-{t}" for t in GLUE])
    raise KeyError(f"Unknown score {config_name!r}. Accepted: {accepted}.")


class CourseScores(evaluate.Metric):
    def _info(self):
        parts(self.config_name)  # refuse unknown names early
        value = datasets.Value("float32" if self.config_name in REGRESSION else "int64")
        return evaluate.MetricInfo(
            description=f"{self.config_name}, computed with scikit-learn / scipy",
            citation="Pedregosa et al. (2011), Scikit-learn; Virtanen et al. (2020), SciPy 1.0.",
            inputs_description="predictions and references: one label id (or score, for correlations) per example.",
            features=datasets.Features({"predictions": value, "references": value}),
        )

    def _compute(self, predictions, references, average="binary"):
        """``average`` is scikit-learn's (and evaluate's f1's): "binary", or "micro" / "macro" / "weighted" for more
        than two classes; the other scores ignore it."""
        out = {}
        for name in parts(self.config_name):
            out.update(SCORES[name](predictions, references, average))
        return out
