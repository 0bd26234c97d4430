"""Entity-level precision, recall and F1 (plus token accuracy) for tag sequences, computed by the seqeval library.

Loaded through ``course_utils.metrics.load_metric("seqeval")``. Inputs: predictions and references, one list of tag
strings per sentence (``[["B-ORG", "O", ...], ...]``). An entity counts as found only when its type and its exact
extent match; ``O`` tokens count for accuracy only. Output keys follow evaluate's own seqeval metric:
overall_precision / overall_recall / overall_f1 / overall_accuracy, and per entity type a dict
{precision, recall, f1, number} (number = gold entities of that type).

Options to ``compute``: ``scheme`` ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU") with ``mode="strict"`` for
seqeval's strict matching (default: its lenient CoNLL-script matching); ``zero_division`` (default 0) for a type
that is never predicted.
"""

import datasets
import evaluate
from seqeval import scheme as seqeval_schemes
from seqeval.metrics import accuracy_score, classification_report, f1_score, precision_score, recall_score

SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")
SUMMARIES = ("micro avg", "macro avg", "weighted avg")


class CourseSeqeval(evaluate.Metric):
    def _info(self):
        tags = datasets.Sequence(datasets.Value("string"))
        return evaluate.MetricInfo(
            description="entity-level precision / recall / F1 and token accuracy, computed with seqeval",
            citation="Hiroki Nakayama (2018), seqeval: A Python framework for sequence labeling evaluation.",
            inputs_description="predictions and references: one list of tag strings (e.g. 'B-PER') per sentence.",
            features=datasets.Features({"predictions": tags, "references": tags}),
        )

    def _compute(self, predictions, references, scheme=None, mode=None, zero_division=0):
        predictions, references = [list(p) for p in predictions], [list(r) for r in references]
        for i, (p, r) in enumerate(zip(predictions, references)):
            if len(p) != len(r):
                raise ValueError(
                    f"Sentence {i} has {len(p)} predicted tags but {len(r)} gold tags: give one tag per "
                    "word in both (map sub-token predictions back to words first)."
                )
        if scheme is not None and scheme not in SCHEMES:
            raise ValueError(f"Unknown scheme {scheme!r}. Accepted: {', '.join(SCHEMES)} (or None).")
        if mode not in (None, "strict") or (mode == "strict" and scheme is None):
            raise ValueError(f"mode must be None or 'strict' (which needs a scheme, e.g. scheme='IOB2'); got {mode!r}.")
        options = {
            "mode": mode,
            "scheme": getattr(seqeval_schemes, scheme) if scheme else None,
            "zero_division": zero_division,
        }
        report = classification_report(references, predictions, output_dict=True, **options)
        out = {
            name: {
                "precision": float(row["precision"]),
                "recall": float(row["recall"]),
                "f1": float(row["f1-score"]),
                "number": int(row["support"]),
            }
            for name, row in report.items()
            if name not in SUMMARIES
        }
        out["overall_precision"] = float(precision_score(references, predictions, **options))
        out["overall_recall"] = float(recall_score(references, predictions, **options))
        out["overall_f1"] = float(f1_score(references, predictions, **options))
        out["overall_accuracy"] = float(accuracy_score(references, predictions))
        return out
