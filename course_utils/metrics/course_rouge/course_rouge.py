"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum F-measures (Lin, 2004), computed by Google's ``rouge_score`` package.

Loaded through ``course_utils.metrics.load_metric("rouge")``; called like evaluate's own rouge metric:
``compute(predictions=[...], references=[...], rouge_types=None, use_stemmer=False, use_aggregator=True)``.
A reference may be one string or a list of strings (the best-scoring one counts). With ``use_aggregator`` the result
is the mean F-measure over examples (evaluate's metric reports a bootstrap estimate of that mean; the plain mean is
deterministic), otherwise one list of scores per ROUGE type. ROUGE-Lsum splits summaries into lines at newlines.
"""

import datasets
import evaluate
from rouge_score import rouge_scorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


class CourseRouge(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="ROUGE F-measures through the rouge_score package (mean over examples)",
            citation="Lin (2004), ROUGE: A Package for Automatic Evaluation of Summaries.",
            inputs_description="predictions: list of str; references: list of str or list of lists of str.",
            features=[
                datasets.Features(
                    {"predictions": datasets.Value("string"), "references": datasets.Sequence(datasets.Value("string"))}
                ),
                datasets.Features({"predictions": datasets.Value("string"), "references": datasets.Value("string")}),
            ],
        )

    def _compute(self, predictions, references, rouge_types=None, use_aggregator=True, use_stemmer=False):
        rouge_types = list(rouge_types or ROUGE_TYPES)
        unknown = [t for t in rouge_types if t not in ROUGE_TYPES]
        if unknown:
            raise ValueError(f"Unknown ROUGE type(s) {unknown}; accepted: {', '.join(ROUGE_TYPES)}.")
        scorer = rouge_scorer.RougeScorer(rouge_types, use_stemmer=use_stemmer)
        per_type = {t: [] for t in rouge_types}
        for prediction, reference in zip(predictions, references):
            refs = [reference] if isinstance(reference, str) else list(reference)
            if not refs:
                raise ValueError("Every prediction needs at least one reference summary.")
            scores = scorer.score_multi(refs, prediction) if len(refs) > 1 else scorer.score(refs[0], prediction)
            for t in rouge_types:
                per_type[t].append(scores[t].fmeasure)
        if not use_aggregator:
            return per_type
        return {t: sum(v) / len(v) if v else 0.0 for t, v in per_type.items()}
