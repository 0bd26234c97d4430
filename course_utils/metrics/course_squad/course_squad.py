"""SQuAD v1.1 exact match and F1, as the official evaluation script defines them, in percent (0-100).

Loaded through ``course_utils.metrics.load_metric("squad")``. Inputs follow evaluate's squad metric:
predictions ``[{"id": ..., "prediction_text": ...}]`` and references
``[{"id": ..., "answers": {"text": [...], "answer_start": [...]}}]``, matched by id.
Both texts are normalised first: lower case, punctuation dropped, the articles a / an / the dropped, runs of
whitespace made one space. Exact match: the normalised texts are equal. F1: harmonic mean of precision and recall of
the shared words (as a multiset). Each question scores its best gold answer; the result is the mean over questions.
"""

import re
import string
from collections import Counter

import datasets
import evaluate

PUNCTUATION = set(string.punctuation)
ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in PUNCTUATION)
    return " ".join(ARTICLES.sub(" ", text).split())


def exact(prediction: str, gold: str) -> float:
    return float(normalize(prediction) == normalize(gold))


def f1(prediction: str, gold: str) -> float:
    predicted, wanted = normalize(prediction).split(), normalize(gold).split()
    shared = sum((Counter(predicted) & Counter(wanted)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(wanted)
    return 2 * precision * recall / (precision + recall)


class CourseSquad(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description="SQuAD v1.1 exact match and F1 (percent), as in the official evaluation script",
            citation="Rajpurkar et al. (2016), SQuAD: 100,000+ Questions for Machine Comprehension of Text.",
            inputs_description="predictions: {id, prediction_text}; references: {id, answers: {text, answer_start}}.",
            features=datasets.Features(
                {
                    "predictions": {"id": datasets.Value("string"), "prediction_text": datasets.Value("string")},
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": {
                            "text": datasets.Sequence(datasets.Value("string")),
                            "answer_start": datasets.Sequence(datasets.Value("int32")),
                        },
                    },
                }
            ),
        )

    def _compute(self, predictions, references):
        answers = {}
        for p in predictions:
            if p["id"] in answers:
                raise ValueError(f"Two predictions for question {p['id']!r}: give one per question.")
            answers[p["id"]] = p["prediction_text"]
        gold_ids = {r["id"] for r in references}
        unknown = [i for i in answers if i not in gold_ids]
        missing = [r["id"] for r in references if r["id"] not in answers]
        if unknown or missing:
            raise ValueError(
                f"Predictions and references must cover the same questions: {len(missing)} reference(s) without a "
                f"prediction{f' (first: {missing[0]!r})' if missing else ''}, {len(unknown)} prediction(s) for unknown "
                f"ids{f' (first: {unknown[0]!r})' if unknown else ''}. Predict '' for a question left unanswered."
            )
        em = total_f1 = 0.0
        for r in references:
            gold = list(r["answers"]["text"])
            if not gold:
                raise ValueError(f"Question {r['id']!r} has no gold answer: SQuAD v1.1 scoring needs at least one.")
            em += max(exact(answers[r["id"]], g) for g in gold)
            total_f1 += max(f1(answers[r["id"]], g) for g in gold)
        n = max(len(references), 1)
        return {"exact_match": 100.0 * em / n, "f1": 100.0 * total_f1 / n}
