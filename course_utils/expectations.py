"""What the lessons' claims expect: per profile, a threshold; where a number is a paper's, the paper; what a miss means.

A lesson's cell says what it measured and which way the claim goes::

    claim("SST-2 validation accuracy", sst2_accuracy, ">=")

and ``claims.claim`` finds the rest here, under the claim's name. Keeping thresholds out of the lessons leaves their
cells free of profile bookkeeping; the printed claim, the course report and a failed claim's message still show each
threshold and source. A name may hold ``{placeholders}`` for what a lesson fills in at run time (a task, a step count):
they match any text, and ``why`` and ``source`` may use them. A threshold that only one profile can meet is given for
that profile alone; the others record the value as 'not expected' (a rehearsal's random stand-ins are asked only for
what they can show). A threshold is finite: a claim that holds for any finite value is an ``assert``, not a claim.
``source`` names the paper behind a threshold; ``source_for`` the profiles whose threshold it gives.

Every lesson's claims are here (lesson 01 introduces ``claim``); ``tests/test_expectations.py`` checks that every
claim a notebook makes has exactly one entry and every entry a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Expectation:
    """One claim's expectation: the comparison, thresholds per profile (``every`` for all of them), a source."""

    op: str
    thresholds: dict[str, Any] = field(default_factory=dict)
    every: Any = None
    source: str | None = None
    why: str = ""
    source_for: tuple[str, ...] | None = None  # the profiles whose threshold the source gives (None: all)


def expect(
    op: str,
    *,
    every: Any = None,
    source: str | None = None,
    source_for: tuple[str, ...] | None = None,
    why: str = "",
    **thresholds: Any,
) -> Expectation:
    """An entry of ``LESSONS``: ``expect(">=", quick=0.85, full=0.912, source="...", source_for=("full",))``."""
    return Expectation(op, dict(thresholds), every, source, why, source_for)


# Lesson -> claim name -> expectation. Thresholds are the lesson's own expectation unless ``source`` names a paper.
LESSONS: dict[str, dict[str, Expectation]] = {
    # ---- 01 · masking
    "01": {
        "words split into several pieces": expect(
            "between",
            quick=(0.02, 0.3),
            full=(0.02, 0.3),
            why="most words of ordinary English should be single WordPieces",
        ),
        "position similarity, neighbours minus far": expect(
            ">", quick=0.1, full=0.1, why="neighbouring positions should have more similar embeddings than distant ones"
        ),
        "'bank' same-sense minus other-sense cosine": expect(
            ">", quick=0.05, full=0.05, why="contextual vectors should separate the two senses of 'bank'"
        ),
        # The control a topic-only separation fails: a full stop, one sense, in the same sentences (quick: MiniLM,
        # whose last layer is tuned for sentence vectors, separates the full stop's groups even more there)
        "'bank' sense gap minus the final full stop's, mean over the encoder's layers": expect(
            ">", quick=0.02, why="bank's vectors should separate by sense beyond what the sentences' topics do"
        ),
        "best context-free loss minus the SBO loss, MLM + SBO": expect(
            ">=",
            every=0.1,
            why="the boundary vectors should predict a span's words better than their frequency, at their offset or "
            "anywhere",
        ),
        "SBO loss, control and MLM + SBO apart (either way)": expect(
            "<",
            every=0.1,
            why="the text says that, at this scale, the SBO gradient moves the held-out SBO loss by under 0.1 nats, "
            "either way: the head reads what MLM put there",
        ),
        "NSP accuracy of the word-overlap rule": expect(
            ">",
            every=0.65,
            why="a random B sentence should usually share no content word with A: NSP is largely a topic test",
        ),
    },
    # ---- 02 · pretraining
    "02": {
        "masked-only speed-up, forward + backward": expect(
            ">",
            quick=2.0,
            full=1.0,
            why="projecting only the masked positions should make a small model's step several times faster (about "
            "3x by the multiply-adds of section 3c)",
        ),
        "held-out loss, fall from the start": expect(
            ">=", quick=0.3, full=0.3, why="held-out MLM loss should fall by at least 30 % from the start of training"
        ),
        "unigram loss minus held-out loss (nats)": expect(
            ">", quick=0.0, full=0.0, why="the model should beat context-free unigram guessing"
        ),
        "largest held-out loss change, one evaluation to the next": expect(
            "<", quick=0.0, full=0.0, why="more steps should lower the held-out loss for every size"
        ),
        "largest held-out loss change, one size to the next larger": expect(
            "<",
            quick=0.0,
            full=0.0,
            why="after the same number of steps, a larger model should have the lower held-out loss",
        ),
        "held-out loss, repeated 64th minus all blocks, same steps": expect(
            ">=", quick=0.1, full=0.1, why="the same steps over fewer unique blocks should generalise worse"
        ),
        "training loss, all blocks minus repeated 64th (last 50 steps)": expect(
            ">=", quick=0.1, full=0.1, why="a slice read many times should be partly memorised: lower training loss"
        ),
        "nats below unigram, all targets minus [MASK] positions only": expect(
            ">=",
            quick=0.2,
            full=0.2,
            why="part of the gain below the unigram line should come from copying the targets left unchanged in the "
            "input, which [MASK] positions do not show",
        ),
        "course checkpoint: unigram loss minus held-out loss at [MASK] positions (nats)": expect(
            ">=",
            every=1.0,
            why="the checkpoint later lessons start from should use the context, not only word frequencies: at "
            "[MASK] positions nothing can be copied",
        ),
    },
    # ---- 03a · fine-tuning on GLUE
    "03a": {
        "SST-2 validation accuracy": expect(
            ">=",
            quick=0.85,
            full=0.912,
            source="Sanh et al. (2019), Table 1: BERT-base 92.7 on the SST-2 dev set, less 1.5 points",
            source_for=("full",),
            why="below what this recipe reaches (quick: 0.85-0.87 over seeds)",
        ),
        "main run minus the best small run": expect(
            ">", quick=0.02, full=0.02, why="the main run's larger training set should beat the small runs"
        ),
        "training-loss fall, first to last 10 steps": expect(
            ">", quick=0.2, full=0.2, why="the training loss should fall clearly"
        ),
        "layer decay 0.5 minus one rate, at five times the small-task rate": expect(
            ">=",
            quick=0.03,
            why="slowing the lower layers should protect what pretraining put there when the rate is high",
        ),
        "pretrained minus random-init accuracy": expect(
            ">=", quick=0.1, full=0.1, why="pretraining should be worth ten points or more on a small task"
        ),
        "random-init accuracy above majority": expect(
            "<", quick=0.05, full=0.05, why="random init should stay at the majority class in 32 steps"
        ),
        "pretrained minus random-init accuracy, random init on its own budget": expect(
            ">=",
            quick=0.05,
            why="five times the steps should not make up for pretraining on a thousand sentences (0.05 is about "
            "twice the standard error of a difference of two accuracies on 872 sentences)",
        ),
        "frozen-encoder accuracy above majority": expect(
            ">", quick=0.15, full=0.15, why="frozen sentence vectors should carry sentiment"
        ),
        "fine-tuned minus frozen accuracy (mean pooling)": expect(
            ">=", quick=0.03, full=0.03, why="fine-tuning the encoder should beat the frozen one with the same pooling"
        ),
        "tiny course BERT minus the same architecture from random weights, same recipe": expect(
            "<",
            quick=0.02,
            why="sixteen books' worth of pretraining should buy a 2-layer, 128-wide model no clear lead on movie "
            "reviews",
        ),
        "warmup gain at a high learning rate": expect(
            ">=", quick=0.05, full=0.05, why="warmup should be what makes the high learning rate usable"
        ),
        "fine-tuned encoder's lead over word counts, small set minus main run": expect(
            ">=",
            quick=0.03,
            full=0.03,
            why="with more labels, a model that learns only from them should catch up part of the way",
        ),
        "grouped over fixed-length batches, training speed": expect(
            ">=", quick=1.3, full=1.3, why="dynamic, length-grouped batches should be clearly faster"
        ),
        "grouped over plain dynamic batches, training speed": expect(
            ">=",
            quick=1.2,
            why="grouping by length should cut the positions computed (69 % padding to 28 %) and so the time; on a "
            "GPU, short batches cost about the same whatever their length, so the full profile only records it",
        ),
    },
    # ---- 03b · sentence pairs and embeddings
    "03b": {
        "STS-B Spearman over word overlap": expect(
            ">=", quick=0.1, full=0.1, why="the fine-tuned cross-encoder is not clearly above word overlap"
        ),
        "MRPC accuracy minus the majority class's, size of the gap": expect(
            "<",
            quick=0.05,
            why="the text says 1,200 pairs and one epoch neither clear always-'equivalent' measurably nor fall "
            "below it",
        ),
        # the gap claim above would also pass for a model that always says "equivalent"; this one would not
        "MRPC pairs the model calls 'equivalent', share": expect(
            "<", quick=0.97, full=0.97, why="a model that learned anything should not call every pair a paraphrase"
        ),
        "bi-encoder Spearman over word overlap": expect(
            ">", every=0.15, why="the bi-encoder should beat word overlap clearly"
        ),
        "cross-encoder time per pair over bi-encoder time per sentence": expect(
            ">=",
            quick=1.5,
            full=1.5,
            why="reading two sentences together should cost clearly more than embedding one (over 1,500 x 1,500 pairs "
            "the text's 'over a thousand times' needs more than 1.34: n^2 passes against 2n)",
        ),
        "role-swapped pairs' place between unrelated and identical, cross-encoder": expect(
            ">=",
            quick=0.8,
            why="a cross-encoder trained on 1,500 STS-B pairs should not have learned to read who does what",
        ),
        "role-swapped pairs' place between unrelated and identical, bi-encoder": expect(
            ">=",
            quick=0.8,
            full=0.8,
            why="all-MiniLM-L6-v2 should rate a sentence with its roles swapped almost as itself",
        ),
    },
    # ---- 03c · named entities
    "03c": {
        "CoNLL-2003 validation entity F1": expect(
            ">=",
            quick=0.7,
            full=0.94,
            source="the course's estimate from Devlin et al. (2019), Table 7 (BERT-base, cased, with document "
            "context: dev F1 96.4), less about 2 points for an uncased model reading one sentence at a time",
            why="below the lesson's target for this profile",
            source_for=("full",),
        ),
        # the lesson's own expectation (no paper reports this baseline's F1); quick sits above what its F1 claim implies
        "entity F1 gain over training-set lookup": expect(
            ">",
            quick=0.2,
            full=0.1,
            why="the model should beat memorisation clearly (quick: above what the F1 claim alone implies, 0.178 over "
            "the lookup's 0.522; full: not yet set apart from the F1 claim)",
        ),
    },
    # ---- 03d · question answering
    "03d": {
        # full: the same margins as quick (the lesson's own expectation); the paper's score is the claim after them
        "SQuAD F1 gain over random span": expect(
            ">=", quick=15, full=15, why="the model's F1 should be clearly above the random-span baseline's"
        ),
        # quick: no target of its own (a small model, 1,200 questions, see below); full: BERT-base's SQuAD v1.1 recipe
        "SQuAD v1.1 validation F1": expect(
            ">=",
            full=87.0,
            source="Devlin et al. (2019), Table 2: BERT-base dev F1 88.5, less 1.5 points",
            why="bert-base fine-tuned as the full profile does (2 epochs at 3e-5, 384-token windows) should come "
            "within 1.5 points of the paper's SQuAD v1.1 dev F1",
        ),
    },
    # ---- 04 · seq2seq
    "04": {
        "copy warm-up, validation copy loss after / before": expect(
            "<", quick=0.3, why="cross-attention should learn to pass the e-mail's tokens to the decoder"
        ),
        # measured from after the copy warm-up (quick), so the warm-up's own fall does not count
        "validation loss on subjects, after their training / before it": expect(
            "<", quick=0.8, full=0.9, why="training on subjects should cut the subject loss substantially"
        ),
        "lead-{recipe_lead_words} ROUGE-L, own subject over another e-mail's": expect(
            ">",
            quick=1.5,
            full=1.5,
            why="the first words of an e-mail should match its own subject better than another's",
        ),
        "distinct outputs, share of validation e-mails": expect(
            ">", quick=0.25, full=0.25, why="a summarizer that reads its input writes more than a few stock phrases"
        ),
        "fine-tuned ROUGE-L, own subject over another e-mail's": expect(
            ">",
            quick=2.0,
            full=1.5,
            why="outputs written from an e-mail should match its own subject better than another's",
        ),
        "news validation loss, after minus before": expect(
            "<", quick=0, full=0, why="fine-tuning on the news articles should lower their validation loss"
        ),
    },
    # ---- 05 · domain-adaptive pretraining
    "05": {
        "biomedical minus books MLM loss, general model": expect(">", quick=0.5, why="in-domain text should be harder"),
        "DAPT's cut in the biomedical loss": expect(
            ">=", quick=0.1, full=0.1, why="DAPT should cut the in-domain loss by at least 10 %"
        ),
        "DAPT's biomedical gain over the control's": expect(
            ">",
            quick=0.3,
            full=0.0,
            why="the wrong-domain control should help the in-domain loss less than DAPT (quick: by 0.3 nats or more; "
            "full: by any margin)",
        ),
        "DAPT's ChemProt gain over the general model": expect(
            ">",
            full=0.0,
            source="Gururangan et al. (2020), Table 3: ChemProt micro-F1, RoBERTa 81.9 -> DAPT 84.2; the course "
            "adapts bert-base-uncased for far fewer steps: a gain, not the paper's number",
            why="DAPT should help the task once the model is large enough to use the domain's text (not expected of"
            " the quick profile's 2-layer model: section 4's text says why)",
        ),
        "lowest mean micro-F1 of any start, minus the majority class": expect(
            ">", quick=0.1, full=0.1, why="every starting model, adapted or not, should beat the majority class"
        ),
        "worst seed of any start, minus the majority class": expect(
            ">", quick=0.02, full=0.05, why="every seed of every starting model should beat the majority class"
        ),
        "DAPT's ChemProt gain over the general model, as a share of the two seed spreads added": expect(
            "<",
            quick=1.0,
            why="the text says the quick profile's 2-layer model shows no clear gain when every weight fine-tunes: "
            "the gain stays within the two seed spreads (the full profile expects a gain instead: \"DAPT's ChemProt "
            'gain over the general model")',
        ),
        "DAPT's ChemProt gain with only the top layer trained, fresh seeds, test split": expect(
            ">",
            quick=0.0,
            full=0.0,
            why="the regime the search selected should keep its gain on seeds and sentences it never saw (the paper "
            "fine-tuned every weight: this regime is the course's, not a reproduction)",
        ),
        "DAPT's ChemProt gain with only the top layer trained, worst fresh seed": expect(
            ">",
            quick=0.0,
            full=0.0,
            why="a gain paired by seed should hold on every fresh seed, not only on average",
        ),
        "all weights minus head only, micro-F1": expect(
            ">", quick=0.0, full=0.0, why="training every weight should beat training the head alone"
        ),
    },
    # ---- 06 · probing
    "06": {
        # full=: bert-base-uncased should do at least as well (the lesson's own expectation)
        "lesson 02's cloze sentences with the expected word in the top 5, share": expect(
            ">=",
            quick=0.6,
            full=0.6,
            why="a masked LM that reads English should rank the word a reader expects among its first five",
        ),
        # quick: what the text below says of the course's English MLM (no full threshold: these are the course's own
        # probes, not Petroni et al.'s T-REx, on which BERT-base answers about 31 % at precision@1)
        "fact probes, precision@1": expect(
            "<=", quick=0.1, why="the text says this model knows almost none of the facts"
        ),
        # full=: the lesson's own expectation (as clear as in the quick run), not a paper's number.
        "log P(right city) gain after {short_steps} steps": expect(
            ">", quick=2, full=2, why="training on the statements should make their answers far more probable, and soon"
        ),
        "right-minus-wrong log P after {recipe_fact_steps} steps minus after {short_steps}": expect(
            ">", quick=1.0, why="which city belongs to which country is learned later than which words are cities"
        ),
        "share of taught facts bound after {recipe_fact_steps} steps": expect(
            ">=",
            quick=0.5,
            why="in our runs 600 steps bound all 6 facts on two builds of the course BERT (seeds 0 and 1); 300 "
            "steps bound 6 on one build and 3 on the other",
        ),
        # quick: what the text below says of the course's English MLM
        "NEG-136-SIMP: true category in the affirmative top-5, share": expect(
            ">=", quick=0.3, why="the text says it often knows what kind of thing the subject is"
        ),
        # A model that ignores its input sits near 0.5 on both (the lesson prints a random-weights copy's shares);
        # full=: the lesson's own expectation for bert-base-uncased, whose insensitivity to "not" Ettinger (2020) showed
        "NEG-136-SIMP: true category over the false one, affirmative, share": expect(
            ">=", quick=0.8, full=0.8, why="a masked LM should know what kind of thing a robin is"
        ),
        "NEG-136-SIMP: with 'not', the affirmative's category still over the other, share": expect(
            ">=",
            quick=0.8,
            full=0.8,
            why="the text says 'not' leaves the model's preferred category in place (Ettinger, 2020); a model that "
            "read 'not' would fall below 0.5",
        ),
        "ROLE-88: distance of the role-sensitive share from chance": expect(
            "<=", quick=0.2, why="the text says this model is no better than a coin toss at who did what to whom"
        ),
        "CrowS-Pairs: distance of the stereotype score from 50 %": expect(
            "<",
            quick=0.1,
            why="the text says this model shows no clear preference on these pairs (its 95 % interval holds 50 %)",
        ),
        # full=: the lesson's own expectations (as clear as in the quick run), not a paper's numbers.
        "UPOS accuracy, best layer": expect(
            ">=", quick=0.9, full=0.9, why="a linear probe should read part of speech from the best layer"
        ),
        "UPOS accuracy over the majority label, best layer": expect(
            ">=", quick=0.3, full=0.3, why="the best layer should beat the majority label clearly"
        ),
        "UPOS accuracy, best layer minus embeddings": expect(
            ">", quick=0.03, full=0.03, why="contextual layers should beat the embedding layer by a few points"
        ),
        # the embeddings' own selectivity is already well above 0 (a linear probe cannot memorise every word type's
        # random label): the claim is what context adds to it
        "linear UPOS selectivity, best layer minus the embeddings'": expect(
            ">",
            quick=0.1,
            full=0.05,
            why="context should make the best layer clearly more selective than the embeddings",
        ),
    },
    # ---- 07 · efficiency and the BERT family
    "07": {
        "batch of the largest size over one sentence at a time, sentences/s": expect(
            ">=", quick=1.5, full=1.5, why="a batch should beat one sentence at a time by at least half"
        ),
        "longest over shortest sequences, sentences/s, worst batch size": expect(
            "<", quick=0.5, full=1.0, why="four times the tokens should cost more than twice the time on a CPU"
        ),
        "bf16 sentence vectors, lowest cosine to fp32's": expect(
            ">", every=0.99, why="bf16 sentence vectors should point the same way as fp32's"
        ),
        "bf16 mean |difference| over typical |value|": expect(
            "between",
            every=(1e-5, 0.05),
            why="bf16 should change hidden states by a few percent at most, and not by nothing: no difference at all "
            "means autocast did not run in bf16",
        ),
        "worst selective choice minus the majority class, accuracy": expect(
            ">", quick=0.15, full=0.15, why="every choice should learn the task"
        ),
        "everything minus top layer, accuracy": expect(
            ">", quick=0.0, full=0.0, why="training everything should do best here"
        ),
        "top layer + LayerNorms over top layer, trainable weights": expect(
            "<", quick=1.01, full=1.01, why="the LayerNorms are a tiny share of the weights"
        ),
        "top layer's training time over everything's": expect(
            "<", quick=0.8, full=0.8, why="stopping backward after the top layer should save time"
        ),
        "ALBERT's fall in held-out MLM loss, nats": expect(
            ">", quick=1.0, full=1.0, rehearsal=0.0, why="the shared-layer model should learn"
        ),
        "ALBERT minus the same model unshared, held-out MLM loss after the same steps": expect(
            "<", quick=0.2, full=0.2, why="sharing one layer should cost little held-out loss at the same steps"
        ),
        "student's speed-up over the teacher": expect(
            ">=",
            quick=2.0,
            full=1.5,
            source="Sanh et al. (2019), Table 3: DistilBERT (6 layers) runs 60 % faster than BERT-base (12)",
            source_for=("full",),
            why="the student should run clearly faster than the teacher (quick: 2 of 6 layers; full: 6 of 12)",
        ),
        # a share any 2-layer student of the teacher's layers may keep: a gold-label student is trained beside it, so
        # this claims the student's accuracy, not distillation's part in it (lesson 07 prints both)
        "share of the teacher's accuracy the 2-layer distilled student keeps (any student's, not distillation's)": expect(  # noqa: E501
            ">=",
            quick=0.9,
            full=0.95,
            source="Sanh et al. (2019), Table 1: DistilBERT keeps 97 % of BERT-base's GLUE dev score (SST-2 91.3 vs"
            " 92.7); this task-specific distillation is asked for 95 %",
            source_for=("full",),
            why="the student should keep most of the teacher's accuracy",
        ),
        "ELECTRA generator's MLM loss, first 10 steps minus last 10": expect(
            ">", quick=0.5, full=0.5, why="the generator should learn: its MLM loss should fall"
        ),
        "ELECTRA discriminator's ROC AUC, held out": expect(
            ">=", quick=0.7, full=0.7, why="the discriminator should tell replaced tokens apart"
        ),
        # quick: a measured bound (150 steps learn about what word frequencies tell); full: the effect ELECTRA is for
        "ELECTRA discriminator's ROC AUC minus the rarity rule's, size of the gap": expect(
            "<",
            quick=0.06,
            why="in 150 steps, with a generator whose samples are near-random words, the discriminator should rank "
            "replaced tokens about as well as a rule that reads no context (the rarer, the likelier replaced)",
        ),
        "ELECTRA discriminator's ROC AUC minus the rarity rule's, held out": expect(
            ">",
            full=0.0,
            why="a longer run with a wider generator should read context beyond word rarity (Clark et al., 2020); "
            "not yet measured on a GPU",
        ),
    },
    # ---- 08 · prompting and few-shot
    "08": {
        "best description's zero-shot accuracy minus the majority class": expect(
            ">", every=0.1, why="a sentence encoder should beat the majority class zero-shot"
        ),
        "multi-task minus single-task, mean over seeds": expect(
            ">",
            quick=0.02,
            full=0.0,
            why="the related task's extra steps should lift the small task (its labels or the updates alone: no "
            "control here separates them)",
        ),
        "multi-task minus single-task, worst seed": expect(
            ">", quick=0.0, why="the related task's extra steps should lift the small task in every seed"
        ),
        "multi-task minus single-task with the same steps, mean over seeds": expect(
            "<", quick=-0.03, why="the text says more steps on the small task beat the second task, clearly"
        ),
        "single-task with the same steps, mean over seeds": expect(
            ">", quick=0.3, why="the longest single-task run should learn the small task, not stay near 0"
        ),
        # quick: none (no trained run reaches word overlap there, as the text says; a "< 0" bound, which any broken run
        # would also meet, is not a claim)
        "best trained run minus word overlap, over it": expect(
            ">", full=0.0, why="a fine-tuned bert-base should beat counting shared words"
        ),
        "zero-shot accuracy, best pattern and verbalizer": expect(
            ">=",
            quick=0.6,
            full=0.6,
            why="a masked LM that has read reviews should put the fitting label word first more often than chance",
        ),
        "zero-shot accuracy, best minus worst pattern and verbalizer": expect(
            ">=",
            quick=0.05,
            why="the text says the wording of the pattern and the choice of label words move the accuracy",
        ),
        "few-shot training loss, first step minus last 5, worse method": expect(
            ">", quick=0.4, full=0.4, why="both methods should fit their few examples (from about ln 2 = 0.69)"
        ),
        "few-shot training loss, last 5 steps, worse method": expect(
            "<", quick=0.2, why="both methods should fit their few examples nearly exactly"
        ),
        "PET accuracy at k = 32 minus the majority class": expect(
            ">=",
            quick=0.1,
            why="a few labelled reviews through the pattern should lift the course's English MLM well above chance",
        ),
        "PET at k = 32 minus the same pattern zero-shot, same sentences": expect(
            ">=",
            quick=0.02,
            full=0.0,
            why="the labelled reviews should add to what the untrained pattern already scores, not only to chance",
        ),
        "PET minus [CLS] head at k = 32, size of the gap": expect(
            "<",
            quick=0.04,
            why="the text says that, with two layers trained for 40 steps, PET and a new head end within a few points",
        ),
        "PET minus [CLS] head, accuracy at k = {smallest_k}": expect(
            ">",
            full=0.0,
            source="Gao et al. (2021), Table 3: prompt-based fine-tuning ahead of a head on SST-2 at 16 examples per "
            "class (RoBERTa-large); k = 8 is fewer than they measured",
            why="PET should beat a new head when labelled examples are few",
        ),
    },
}


def _pattern(name: str) -> re.Pattern:
    """A name with ``{field}`` placeholders -> a regex that captures each field (``{{``/``}}`` are literal braces)."""
    parts = re.split(r"(\{\w+\})", name.replace("{{", "\0").replace("}}", "\1"))
    regex = "".join(
        f"(?P<{p[1:-1]}>.+?)" if re.fullmatch(r"\{\w+\}", p) else re.escape(p.replace("\0", "{").replace("\1", "}"))
        for p in parts
    )
    return re.compile(regex + r"\Z")


@cache
def _templates() -> list[tuple[re.Pattern, Expectation]]:
    """(pattern, entry) for every name with placeholders."""
    return [(_pattern(n), e) for lesson in LESSONS.values() for n, e in lesson.items() if re.search(r"\{\w+\}", n)]


def expectation_for(name: str) -> Expectation:
    """The expectation of the claim called ``name``: an entry with that exact name, else the one whose placeholders
    match it (``why`` and ``source`` filled in with what they captured). A name with no entry is an error that says
    where entries live."""
    for lesson in LESSONS.values():
        if name in lesson:
            return lesson[name]
    for pattern, entry in _templates():
        found = pattern.match(name)
        if found:
            fill = found.groupdict()
            return Expectation(
                entry.op,
                entry.thresholds,
                entry.every,
                entry.source.format(**fill) if entry.source else entry.source,
                entry.why.format(**fill),
                entry.source_for,
            )
    raise KeyError(
        f"No expectation for the claim {name!r}: add it to course_utils/expectations.py (LESSONS, under its lesson) "
        "or give the claim its thresholds (quick=..., full=..., every=...)."
    )
