"""What the two run profiles mean, in one place, laid out lesson by lesson.

``quick`` is the offline CPU run (two to four minutes a notebook on a 2-core laptop, small real models, real data
subsets); ``full`` is the lecture-scale GPU run with the hub checkpoints; ``rehearsal`` is ``full`` with its steps
and examples capped (``derive``), run on CPU against random-weight stand-ins of the full profile's checkpoints
(``course_tools.standin_checkpoints``), so that every branch ``full`` takes runs on every change. Notebooks read every
size from here and never hard-code one.
"""

from __future__ import annotations

import ast
import os
import types
import typing
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from typing import Any

import torch

PROFILE_ENV = "COURSE_PROFILE"
# Recipe fields set for this run, e.g. COURSE_SET="finetuning.sst2.lr=3e-5; seq2seq.epochs=1" (run_course --set).
SET_ENV = "COURSE_SET"
# The course's own BERT with its MLM head, trained on the books by the maintainers (COURSE_BERT_RECIPE below) and
# shipped with the package (course_utils/data/models/tiny-bert-books; course_utils.course_bert).
COURSE_CHECKPOINT = "course/tiny-bert-books"


def _set_fields(recipe: Any) -> str:
    """A recipe as its profile sets it: the fields that differ from their defaults, in order (a field left at its
    default is one the lesson does not vary, or does not use: SQuAD's window stride in an SST-2 recipe). All of them:
    ``dataclasses.asdict(recipe)``."""
    shown = []
    for f in fields(recipe):
        value = getattr(recipe, f.name)
        default = (
            f.default
            if f.default is not MISSING
            else (f.default_factory() if f.default_factory is not MISSING else MISSING)
        )
        if default is MISSING or value != default:
            shown.append(f"{f.name}={value!r}")
    return f"{type(recipe).__name__}({', '.join(shown)})"


@dataclass(frozen=True)
class BertSize:
    """The shape of a BERT encoder (``BertConfig``'s hidden_size, num_hidden_layers, num_attention_heads,
    intermediate_size)."""

    hidden: int
    layers: int
    heads: int
    intermediate: int


@dataclass(frozen=True)
class PretrainRecipe:
    """Everything that decides a notebook-02 pretraining run on the course's books (and the course checkpoint)."""

    __repr__ = _set_fields

    vocab_size: int  # WordPiece vocabulary learned from the training books
    size: BertSize
    block_length: int  # packed sequence length = max_position_embeddings
    batch_size: int  # blocks per step
    steps: int
    lr: float  # peak learning rate after warmup
    warmup_steps: int
    eval_every: int  # held-out evaluation interval (steps)
    eval_blocks: int  # held-out blocks from the validation books
    dropout: float = 0.0
    mlm_probability: float = 0.15
    seed: int = 0
    # None: BERT's random position embeddings; a number: they start as sinusoids (Vaswani et al. 2017) at that many
    # times the word embeddings' spread
    sinusoid_scale: float | None = None


# The course checkpoint's own recipe. The maintainers built it once and it ships with the package
# (course_utils/data/models/tiny-bert-books; `python -m course_tools.build_course_bert --rebuild` trains it again, ten
# to forty minutes on two CPU cores). It is a named constant, not a profile's field, so that retuning a lesson's live
# run cannot silently invalidate the shipped checkpoint; lessons 03a, 05, 06 and 07 start from the model it gives.
# The trials behind it: docs/instructors/recipe-trials.md (python -m course_tools.build_course_bert prints its result).
# fmt: off
COURSE_BERT_RECIPE = PretrainRecipe(
    vocab_size=16000, size=BertSize(hidden=128, layers=2, heads=2, intermediate=512), block_length=128,
    batch_size=16, steps=5000, lr=2e-3, warmup_steps=500, eval_every=500, eval_blocks=64,
    mlm_probability=0.3,   # twice BERT's rate: more predictions per block (Wettig et al. 2023: 15 % is not optimal)
    sinusoid_scale=4.0,    # positions from which "the word before" is easy to find
)
# fmt: on


@dataclass(frozen=True)
class EnglishMLMRecipe:
    """Everything that decides the course's English masked LM: MiniLM's body (all-MiniLM-L6-v2, which has no MLM
    head) with BERT's MLM head, the head and the top ``trained_layers`` layers trained on ``corpora``; the embeddings
    and the lower layers stay MiniLM's, so only what was trained ships (``course_utils.english_mlm``)."""

    __repr__ = _set_fields

    base: str  # the encoder whose body it keeps (a hub name the resolver finds offline)
    trained_layers: int  # top encoder layers trained with the new head; the rest are frozen
    # (dataset, config, split, text column, copies): the training text, each text repeated `copies` times
    corpora: tuple[tuple[str, str | None, str, str, int], ...]
    block_length: int
    batch_size: int
    steps: int
    lr: float
    warmup_steps: int
    eval_every: int
    eval_blocks: int  # held-out blocks of the books' validation split: the held-out loss the rebuild is checked on
    mlm_probability: float = 0.15
    dropout: float = 0.0  # about one pass over the text: nothing to regularise, and a step without it is faster
    seed: int = 0


# fmt: off
COURSE_MLM_CHECKPOINT = "course/minilm-mlm"
# The course's English masked LM (course_utils.english_mlm; trained once by the maintainers with
# `python -m course_tools.build_english_mlm`, shipped with the package). Its text: the course's books and the training
# sentences of the GLUE tasks the lessons use (unlabelled: task-adaptive pretraining, Gururangan et al. 2020), SST-2's
# twice. No validation sentence of any task is in it.
COURSE_MLM_RECIPE = EnglishMLMRecipe(
    base="sentence-transformers/all-MiniLM-L6-v2", trained_layers=2,
    corpora=(("gutenberg_books", "default", "train", "text", 1), ("nyu-mll/glue", "sst2", "train", "sentence", 2),
             ("nyu-mll/glue", "cola", "train", "sentence", 1), ("nyu-mll/glue", "mrpc", "train", "sentence1", 1),
             ("nyu-mll/glue", "mrpc", "train", "sentence2", 1), ("nyu-mll/glue", "rte", "train", "sentence1", 1),
             ("nyu-mll/glue", "rte", "train", "sentence2", 1), ("nyu-mll/glue", "stsb", "train", "sentence1", 1),
             ("nyu-mll/glue", "stsb", "train", "sentence2", 1)),
    block_length=128, batch_size=32, steps=1200, lr=5e-4, warmup_steps=100, eval_every=200, eval_blocks=64,
)
# fmt: on


@dataclass(frozen=True)
class ScaleStudy:
    """Notebook 02's scale study: smaller sizes trained with the main run's recipe, evaluated every ``eval_every``
    steps, so together with the main run they give (model size x steps) learning curves."""

    sizes: tuple[BertSize, ...]  # the main run's size is added to these
    eval_every: int


@dataclass(frozen=True)
class FinetuneRecipe:
    """One fine-tuning run of lesson 03: how much training data, how long, how fast. Evaluation always uses the
    task's whole validation split (or held-out set), whatever the profile."""

    __repr__ = _set_fields

    train_examples: int | None  # training subset (None: the whole training split)
    epochs: float
    lr: float  # peak learning rate (linear warmup, then linear decay to 0)
    batch_size: int
    max_length: int  # tokens per example (pairs and QA windows included)
    warmup_ratio: float = 0.1
    seed: int = 0
    stride: int = 128  # question answering: tokens shared by neighbouring windows of a long context
    heldout_articles: int = 8  # question answering: validation articles held out when split by article
    split_by_article: bool = False  # question answering: train and evaluate on articles of SQuAD's validation split
    # (the same data online and offline: the offline mirror has only that split)
    answer_windows_only: bool = False  # question answering: train only on the windows that hold the answer
    eval_max_length: int | None = None  # question answering: evaluation windows (None: max_length)
    eval_stride: int | None = None  # (None: stride)

    @property
    def eval_windows(self) -> tuple[int, int]:
        """(max_length, stride) of the windows a question-answering model is evaluated on."""
        return (
            self.max_length if self.eval_max_length is None else self.eval_max_length,
            self.stride if self.eval_stride is None else self.eval_stride,
        )


@dataclass(frozen=True)
class NewsRecipe:
    """Lesson 04's second summarization task, news, for the full profile: a dataset only the hub has (the offline
    mirror holds AESLC alone), fine-tuned on the recipe's first checkpoint where the hub is reachable."""

    __repr__ = _set_fields

    dataset: str  # hub id
    config: str | None
    source_field: str  # the article column
    target_field: str  # the reference-summary column
    train_examples: int | None  # articles fine-tuned on (None: the whole training split)
    eval_examples: int | None  # validation articles scored with ROUGE (None: all)
    max_source_length: int
    max_target_length: int  # summary tokens, end token included; also the generation limit
    epochs: float
    lead_words: int  # the lead baseline's first k words (about a reference summary's length)


@dataclass(frozen=True)
class Seq2SeqRecipe:
    """Lesson 04's summarizer: which encoder-decoder, how much AESLC (email body -> subject line), how long.

    ``warm_start`` builds the encoder-decoder from an encoder-only BERT checkpoint on both sides (Rothe et al., 2020):
    the decoder keeps the checkpoint's first ``decoder_layers`` layers, gets a causal mask and new cross-attention.
    Otherwise ``models`` are seq2seq checkpoints (T5, BART) loaded as they are."""

    __repr__ = _set_fields

    models: tuple[str, ...]  # checkpoints fine-tuned one after the other (hub names)
    warm_start: bool  # True: models are BERT encoders turned into encoder-decoders
    train_examples: int | None  # AESLC training emails (None: all 14,436)
    eval_examples: int | None  # validation emails scored with loss and ROUGE (None: all 1,960)
    max_source_length: int  # email tokens the encoder sees
    max_target_length: int  # subject tokens (the end-of-sequence token included)
    epochs: float
    lr: float
    batch_size: int
    freeze_encoder: bool = False  # train only the decoder (its cross-attention is new); encoder states computed once
    decoder_layers: int | None = None  # warm start only: decoder depth (None: as deep as the encoder)
    encoder_layers: int | None = None  # warm start only: the checkpoint's lower layers the encoder keeps (None: all)
    cross_attention: str = "random"  # warm start only: new cross-attention starts "random" or as a copy of "self"
    copy_epochs: float = 0.0  # warm start only: epochs of the copy warm-up before the subjects (0: none)
    copy_tokens: int = 12  # copy warm-up: the decoder writes the e-mail's first copy_tokens tokens
    copy_lr: float = 1e-3  # copy warm-up learning rate
    lead_words: int = 4  # the lead baseline's first k words (AESLC subjects average about 4 words)
    max_new_tokens: int = 16  # generation length limit
    warmup_ratio: float = 0.1
    seed: int = 0
    news: NewsRecipe | None = None  # the full profile's news summarization (hub only)


@dataclass(frozen=True)
class AdaptRecipe:
    """Lesson 05: continued MLM pretraining on in-domain (DAPT) or task (TAPT) text, and the ChemProt fine-tuning
    that measures it (Gururangan et al., 2020)."""

    __repr__ = _set_fields

    general_model: str  # the general-domain BERT *with* its MLM head that every run starts from
    block_length: int  # packed MLM block length (no longer than the model's positions)
    batch_size: int  # blocks per MLM step
    steps: int  # MLM steps of every adaptation run (DAPT, TAPT, DAPT+TAPT, wrong domain)
    lr: float  # peak MLM learning rate (below a from-scratch run's: the model is trained already)
    eval_blocks: int  # held-out blocks per domain for the MLM loss
    corpus_sentences: int | None  # sentences per adaptation corpus (None: the smaller corpus' size, for a fair control)
    finetune: FinetuneRecipe  # the downstream ChemProt fine-tuning, the same for every starting model
    seeds: int = 3  # fine-tuning seeds per starting model
    pooling: str = "mean"  # the classifier's pooling over the encoder's token vectors
    eval_examples: int | None = None  # ChemProt validation sentences section 4 scores, a fixed random part (None: all
    # 2,427)
    test_examples: int | None = None  # test sentences the regime's confirmation scores (None: all 3,469)
    # Section 4's regime search, its best regime run live: DAPT on the whole biomedical corpus for `regime_steps`, then
    # only the top `regime_top_layers` layers and the head fine-tune, `regime_seeds` seeds per starting model
    regime_steps: int = 600
    regime_top_layers: int = 1
    regime_seeds: int = 5


@dataclass(frozen=True)
class ProbeRecipe:
    """Lesson 06: how much data the probes see and how long they train."""

    __repr__ = _set_fields

    train_sentences: int | None  # training sentences per probing task (UPOS on UD EWT, NER on CoNLL-2003)
    eval_sentences: int | None  # validation sentences per task the probes are scored on
    max_words: int  # longer sentences are left out (they would need more positions than cheap)
    probe_epochs: int  # passes of every probe over its cached training vectors
    crows_pairs: int | None  # CrowS-Pairs pairs scored (None: all 1,508)
    fact_repeats: int  # copies of the new-fact sentences in the "teach it facts" corpus
    fact_steps: int  # MLM steps on that corpus
    fact_lr: float
    sense_examples: int = 120  # sentences with the word whose uses are projected
    fact_model: str = COURSE_CHECKPOINT  # the MLM taught invented facts (fast enough for fact_steps on 2 cores)


@dataclass(frozen=True)
class EfficiencyRecipe:
    """Lesson 07: what the throughput table measures, and the runs that show accumulation, selective fine-tuning,
    distillation (Sanh et al., 2019) and the tiny ALBERT and ELECTRA models."""

    __repr__ = _set_fields

    inference_batches: tuple[int, ...]  # batch sizes of the throughput table
    inference_lengths: tuple[int, ...]  # sequence lengths (tokens) of the throughput table
    timing_seconds: float  # each throughput cell is timed for at least this long
    micro_batch: int  # examples per micro-batch in the accumulation check
    accumulation_steps: int  # micro-batches per optimizer step (the large batch is their product)
    selective: FinetuneRecipe  # SST-2 runs of selective fine-tuning; the full run is the distillation teacher
    student_layers: tuple[int, ...]  # teacher layers the student keeps (0-based; DistilBERT kept one in two)
    transfer_examples: int | None  # SST-2 training sentences the teacher labels for the student (None: all)
    distill_lr: float
    temperature: float  # softmax temperature of the soft labels (Hinton et al., 2015)
    albert_size: BertSize  # the small ALBERT trained on the books (all its layers share one set of weights)
    electra_size: BertSize  # ELECTRA's discriminator; the generator is half as wide and half as deep
    embedding_size: int  # both: token embeddings this wide, projected up to the hidden size
    family_block_length: int  # tokens per block for the ALBERT and ELECTRA runs on the books
    family_steps: int  # their training steps
    albert_lr: float
    electra_lr: float  # generator and discriminator together
    family_batch_size: int = 16
    seed: int = 0


@dataclass(frozen=True)
class PromptRecipe:
    """Lesson 08: zero-shot cloze patterns and few-shot PET (Schick & Schütze, 2021) on an MLM, and multi-task
    fine-tuning of one sentence-pair encoder with a head per task (Liu et al., 2019)."""

    __repr__ = _set_fields

    mlm_model: str  # BERT *with* its MLM head: the patterns' zero-shot and PET model
    max_length: int  # tokens per pattern text (the pattern itself is never cut)
    fewshot_k: tuple[int, ...]  # labelled training examples per few-shot run (half of each class)
    seeds: int  # few-shot runs per k and method (a seed draws the examples and the init)
    fewshot_steps: int  # optimizer steps of every few-shot run, PET and [CLS] head alike
    fewshot_batch_size: int
    pet_lr: float
    head_lr: float
    demonstrations: int  # labelled examples put in front of the input (in-context, no training)
    multitask_encoder: str  # the shared encoder of the multi-task runs
    small_task: str  # GLUE task with little data, scored on its whole validation split
    aux_task: str  # the related task that shares the encoder
    small_examples: int | None  # training examples of each (None: the whole split)
    aux_examples: int | None
    multitask_trained_layers: int | None  # top encoder layers trained (None: all); the frozen ones run once
    multitask_steps: int  # batches of the small task, in the single- and the multi-task run alike
    multitask_lr: float
    multitask_batch_size: int
    sampling_temperature: float  # task i is drawn with probability proportional to size_i ** (1 / T)
    multitask_seeds: int
    multitask_max_length: int
    eval_examples: int | None = None  # SST-2 validation sentences the in-context runs score (None: all 872)
    fewshot_trained_layers: int | None = None  # top encoder layers a few-shot run trains with its head (None: all)
    fewshot_eval_examples: int | None = None  # SST-2 validation sentences every few-shot run is scored on (None: all)


# The fields that name a checkpoint (a hub id or the course's own), in any profile or recipe.
CHECKPOINT_FIELDS = frozenset(
    {
        "encoder",
        "mlm_checkpoint",
        "course_model",
        "sentence_encoder",
        "models",
        "general_model",
        "mlm_model",
        "multitask_encoder",
        "fact_model",
    }
)


@dataclass(frozen=True)
class Profile:
    """Every checkpoint, size and budget one profile gives the lessons, grouped by the lesson that reads it."""

    name: str
    # read by several lessons
    encoder: str  # pretrained BERT-architecture encoder (01, 03a-d, 07)
    encoder_pooling: str  # how 03b's heads pool it: "cls" (BERT) or "mean" (sentence encoders)
    mlm_checkpoint: str  # pretrained BERT *with* its MLM head (03a's small-model row, 05, 06, 08)
    mixed_precision: bool  # fp16 / bf16 where the device has it (02, 03b)
    seconds_budget: float | None  # wall-clock target of a notebook not named in seconds_budget_overrides
    peak_rss_mb_budget: float | None
    masking_examples: int  # 01: sentences used to measure realised masking rates
    pretraining: PretrainRecipe  # 02: the live pretraining run
    scale_study: ScaleStudy  # 02: the sizes x steps grid
    finetuning: dict[str, FinetuneRecipe]  # 03a-d: runs by task name
    pair_tasks: tuple[str, ...]  # 03b: the GLUE tasks its `Trainer` section fine-tunes (each has a recipe above)
    seq2seq: Seq2SeqRecipe  # 04: the summarizer
    adaptation: AdaptRecipe  # 05: DAPT / TAPT
    probing: ProbeRecipe  # 06: probes
    efficiency: EfficiencyRecipe  # 07: measurements and runs
    prompting: PromptRecipe  # 08: patterns, PET and multi-task
    course_model: str = COURSE_CHECKPOINT  # 02's own small BERT, a row of 03a's table
    sentence_encoder: str = "sentence-transformers/all-MiniLM-L6-v2"  # 03b's bi-encoder
    # each notebook's own wall-clock target (name without .ipynb -> seconds)
    seconds_budget_overrides: tuple[tuple[str, float], ...] = field(default=())

    def finetune(self, task: str) -> FinetuneRecipe:
        """Lesson 03's recipe for ``task`` (a GLUE task name, ``conll2003`` or ``squad``)."""
        if task not in self.finetuning:
            raise ValueError(
                f"Profile {self.name!r} has no fine-tuning recipe for {task!r}. Accepted: {', '.join(self.finetuning)}."
            )
        return self.finetuning[task]

    def seconds_budget_for(self, notebook: str) -> float | None:
        """The wall-clock target for one notebook (``notebook`` without .ipynb)."""
        return dict(self.seconds_budget_overrides).get(notebook, self.seconds_budget)

    def checkpoints(self) -> list[str]:
        """Every checkpoint the profile names (hub ids or the course's own), in the order the lessons meet them."""
        found: list[str] = []

        def walk(obj: Any) -> None:
            if is_dataclass(obj):
                for f in fields(obj):
                    value = getattr(obj, f.name)
                    if f.name in CHECKPOINT_FIELDS:
                        found.extend(n for n in ((value,) if isinstance(value, str) else value) if n not in found)
                    else:
                        walk(value)
            elif isinstance(obj, dict):
                for value in obj.values():
                    walk(value)

        walk(self)
        return found


# fmt: off
# ================================================================================================ lesson by lesson
# Each lesson's quick recipe (2 CPU cores, offline, small real models) sits beside its full one (a Colab GPU, the hub's
# checkpoints, whole datasets); the full recipe is written as the quick one with what changes where little else does.
# Every size a notebook uses is read from here. SECONDS: each notebook's wall-clock budget in the quick profile, its
# time in one run of the whole course (2026-11-26, 1,745 s) plus 5 to 65 %; the course as a whole must stay within
# 30 minutes (course_tools.bench course), which is the tighter bound.
QUICK, FULL = "quick", "full"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"   # the one pretrained encoder offline (from PyPI; no MLM head)
DEFAULT_SECONDS = 120.0
SECONDS: dict[str, float] = {}

# ---------------------------------------------------------------------------------- read by several lessons
ENCODER = {QUICK: MINILM, FULL: "bert-base-uncased"}
ENCODER_POOLING = {QUICK: "mean",   # all-MiniLM-L6-v2 was trained with mean pooling; its [CLS] / pooler were not
                   FULL: "cls"}
MLM_CHECKPOINT = {QUICK: COURSE_MLM_CHECKPOINT,   # no English MLM head exists offline: MiniLM + the course's head
                  FULL: "bert-base-uncased"}
MIXED_PRECISION = {QUICK: False, FULL: True}
PEAK_RSS_MB = {QUICK: 3072.0, FULL: None}

# ----------------------------------------------------------------------------------------------- 01 · masking
MASKING_EXAMPLES = {QUICK: 4000, FULL: 20000}
SECONDS["01_masking"] = 60.0

# ------------------------------------------------------------------------------------------- 02 · pretraining
PRETRAINING = {QUICK: PretrainRecipe(  # the live run: about a minute on 2 CPU cores (the course checkpoint has a
                                       # longer recipe of its own, COURSE_BERT_RECIPE)
    vocab_size=16000, size=BertSize(hidden=128, layers=2, heads=2, intermediate=512), block_length=128,
    batch_size=16, steps=600, lr=2e-3, warmup_steps=60, eval_every=50, eval_blocks=64,
)}
PRETRAINING[FULL] = replace(  # a bert-small-sized run for a GPU, mixed precision: 12 M tokens, about 4 passes over
    PRETRAINING[QUICK],       # the books (more would overfit a model this size)
    size=BertSize(hidden=512, layers=4, heads=8, intermediate=2048), batch_size=64, steps=1500, lr=1e-3,
    warmup_steps=150, eval_every=150, eval_blocks=256, dropout=0.1,
)
SCALE_STUDY = {QUICK: ScaleStudy(sizes=(BertSize(32, 1, 2, 128), BertSize(64, 2, 2, 256)), eval_every=200),
               FULL: ScaleStudy(sizes=(BertSize(128, 2, 2, 512), BertSize(256, 4, 4, 1024)), eval_every=500)}
SECONDS["02_pretraining_bert"] = 180.0

# ---------------------------------------------------------------------------------- 03a-d · fine-tuning (task ->)
_glue = FinetuneRecipe(train_examples=None, epochs=3, lr=2e-5, batch_size=32, max_length=128)  # the BERT paper's
FINETUNING: dict[str, dict[str, FinetuneRecipe]] = {                                            # recipe (full)
    QUICK: {
        "sst2": FinetuneRecipe(train_examples=10000, epochs=1, lr=2e-4, batch_size=32, max_length=128),
        "sst2_small": FinetuneRecipe(train_examples=1000, epochs=1, lr=2e-4, batch_size=32, max_length=128),
        # the course BERT (lesson 02): five epochs at a small model's rate
        "sst2_tiny_bert": FinetuneRecipe(train_examples=1000, epochs=5, lr=5e-4, batch_size=32, max_length=128),
        # 03a's random-init network on its own budget: five times the steps, at the best lr of a search
        "sst2_scratch": FinetuneRecipe(train_examples=1000, epochs=5, lr=2e-4, batch_size=32, max_length=128),
        "mrpc": FinetuneRecipe(train_examples=1200, epochs=1, lr=1e-4, batch_size=16, max_length=128),
        "rte": FinetuneRecipe(train_examples=500, epochs=1, lr=1e-4, batch_size=16, max_length=128),
        "stsb": FinetuneRecipe(train_examples=1500, epochs=1, lr=2e-4, batch_size=16, max_length=128),
        "cola": FinetuneRecipe(train_examples=2000, epochs=1, lr=2e-4, batch_size=32, max_length=64),
        "conll2003": FinetuneRecipe(train_examples=2400, epochs=1, lr=3e-4, batch_size=8, max_length=128),
        # Trained on 128-token windows that hold the answer, evaluated on 256-token windows (lesson 03d says why).
        "squad": FinetuneRecipe(train_examples=1200, epochs=1, lr=3e-4, batch_size=16, max_length=128, stride=32,
                                answer_windows_only=True, eval_max_length=256, eval_stride=64, split_by_article=True),
    },
    FULL: {  # lr 2e-5 to 5e-5, batch 32 (Devlin et al., 2019), one epoch where the data is large
        "sst2": replace(_glue, epochs=1),
        "sst2_small": replace(_glue, train_examples=1000, lr=3e-5),
        "sst2_tiny_bert": FinetuneRecipe(train_examples=1000, epochs=5, lr=5e-4, batch_size=32, max_length=128),
        # five times sst2_small's steps at a from-scratch rate; not yet tuned on bert-base's shape
        "sst2_scratch": replace(_glue, train_examples=1000, epochs=15, lr=1e-4),
        "mrpc": _glue, "rte": _glue, "stsb": _glue, "cola": _glue,
        "conll2003": replace(_glue, lr=3e-5),
        "squad": FinetuneRecipe(train_examples=None, epochs=2, lr=3e-5, batch_size=32, max_length=384, stride=128),
    },
}
# 03b's Trainer section. Quick: MRPC and STS-B, the two pair tasks MiniLM learns within a CPU's minutes; RTE and CoLA
# stayed at their majority class in every recipe tried on 2 cores (instructor appendix 03b), so only the full profile
# runs them (their quick recipes stay, for `COURSE_SET="pair_tasks=('mrpc', 'rte', 'stsb', 'cola')"`).
PAIR_TASKS = {QUICK: ("mrpc", "stsb"), FULL: ("mrpc", "rte", "stsb", "cola")}
SECONDS.update({"03a_finetuning_glue": 320.0, "03b_sentence_pairs_and_embeddings": 170.0,
                "03c_named_entities": 100.0, "03d_question_answering": 160.0})

# ------------------------------------------------------------------------------------------- 04 · seq2seq
SEQ2SEQ = {
    QUICK: Seq2SeqRecipe(  # no seq2seq checkpoint exists offline: warm-start one from MiniLM, train its decoder
        models=(MINILM,), warm_start=True, train_examples=3000, eval_examples=500, max_source_length=48,
        max_target_length=16, epochs=2, lr=5e-4, batch_size=32, freeze_encoder=True, decoder_layers=3,
        # cross-attention learns to read in a copy warm-up: started as a copy of self-attention, over MiniLM's
        # lower two layers (its sentence-embedding top layers barely say which token sits where), 1 epoch
        encoder_layers=2, cross_attention="self", copy_epochs=1.0, copy_tokens=12, copy_lr=1e-3,
    ),
    FULL: Seq2SeqRecipe(  # all of AESLC, 3 epochs; lr 1e-4 sits between the usual T5 (3e-4) and BART (5e-5) rates
        models=("t5-small", "facebook/bart-base"), warm_start=False, train_examples=None, eval_examples=None,
        max_source_length=512, max_target_length=32, epochs=3, lr=1e-4, batch_size=16,
        news=NewsRecipe(  # CNN/DailyMail highlights: a few sentences per article; 20,000 articles keep it to a GPU hour
            dataset="abisee/cnn_dailymail", config="3.0.0", source_field="article", target_field="highlights",
            train_examples=20000, eval_examples=1000, max_source_length=512, max_target_length=128, epochs=1,
            lead_words=50,
        ),
    ),
}
SECONDS["04_seq2seq_t5_bart"] = 195.0

# ------------------------------------------------------------------------------- 05 · domain-adaptive pretraining
ADAPTATION = {QUICK: AdaptRecipe(  # the course's tiny BERT: ~12 s per adaptation run, ~9 s per fine-tuning
    general_model=COURSE_CHECKPOINT, block_length=128, batch_size=16, steps=100, lr=5e-4,
    eval_blocks=64, corpus_sentences=None,
    eval_examples=1200,   # section 4 scores 15 runs on a fixed random half of the validation split (SE ~0.014)
    # the regime lesson 05 runs live, chosen by the regime search (python -m course_tools.regime_search)
    regime_steps=600, regime_top_layers=1, regime_seeds=4,   # four fresh seeds fit the budget; full: five
    # 64 word pieces, so that 15 fine-tuning runs fit the budget
    finetune=FinetuneRecipe(train_examples=None, epochs=1, lr=2e-3, batch_size=32, max_length=64),
)}
ADAPTATION[FULL] = replace(  # bert-base-uncased (the paper adapted RoBERTa; the course's MLM loop is BERT's)
    ADAPTATION[QUICK], general_model="bert-base-uncased", batch_size=32, steps=2000, lr=1e-4, eval_blocks=256,
    seeds=5, eval_examples=None, regime_steps=4000, regime_seeds=5,   # twice the DAPT steps; 1 of 12 layers trains
    finetune=FinetuneRecipe(train_examples=None, epochs=3, lr=2e-5, batch_size=32, max_length=256),
)
SECONDS["05_domain_adaptive_pretraining"] = 270.0

# ------------------------------------------------------------------------------------------------ 06 · probing
# fact_steps: enough steps for the taught facts to bind on every build of the course BERT tried
PROBING = {QUICK: ProbeRecipe(train_sentences=1500, eval_sentences=500, max_words=60, probe_epochs=5, crows_pairs=200,
                              fact_repeats=40, fact_steps=600, fact_lr=1e-3)}   # CrowS-Pairs: ~0.35 s a pair
PROBING[FULL] = replace(  # 3,000 EWT sentences x 13 layers x 768 floats: about 3 GB of cached vectors
    PROBING[QUICK], train_sentences=3000, eval_sentences=1000, max_words=120, probe_epochs=10, crows_pairs=None,
    fact_steps=60, fact_lr=1e-4, fact_model="bert-base-uncased",
)
SECONDS["06_probing"] = 150.0   # its masked LM is MiniLM-sized since issue 38

# ------------------------------------------------------------------------------ 07 · efficiency and the BERT family
EFFICIENCY = {
    QUICK: EfficiencyRecipe(  # MiniLM teacher (6 layers) -> a student of 2 of its layers; about 150 s in all
        inference_batches=(1, 8, 32), inference_lengths=(32, 128), timing_seconds=0.3, micro_batch=8,
        accumulation_steps=4,
        selective=FinetuneRecipe(train_examples=2000, epochs=1, lr=2e-4, batch_size=32, max_length=128),
        student_layers=(0, 5), transfer_examples=3000, distill_lr=3e-4, temperature=2.0,
        albert_size=BertSize(128, 4, 2, 512), electra_size=BertSize(128, 2, 2, 512), embedding_size=64,
        family_block_length=64, family_steps=150, albert_lr=2e-3, electra_lr=3e-4,
    ),  # ELECTRA's lr stays low: faster rates collapse its discriminator to "nothing was replaced"
    FULL: EfficiencyRecipe(  # bert-base-uncased teacher (12 layers) -> DistilBERT's 6 (every other layer)
        inference_batches=(1, 8, 32, 128), inference_lengths=(32, 128, 512), timing_seconds=1.0, micro_batch=8,
        accumulation_steps=4,
        selective=FinetuneRecipe(train_examples=20000, epochs=1, lr=2e-5, batch_size=32, max_length=128),
        student_layers=(0, 2, 4, 6, 8, 10), transfer_examples=None, distill_lr=5e-5, temperature=2.0,
        albert_size=BertSize(256, 8, 4, 1024), electra_size=BertSize(256, 4, 4, 1024), embedding_size=128,
        family_block_length=128, family_steps=1000, albert_lr=1e-3, electra_lr=3e-4, family_batch_size=32,
    ),
}
SECONDS["07_efficiency_and_the_bert_family"] = 150.0

# ------------------------------------------------------------------------------- 08 · prompting and few-shot
# the course's English MLM (MiniLM's body); MiniLM trains its top layer in the multi-task runs
PROMPTING = {QUICK: PromptRecipe(
    mlm_model=COURSE_MLM_CHECKPOINT, max_length=64, fewshot_k=(8, 32), seeds=3, fewshot_steps=40,  # full: 8 to 64
    fewshot_batch_size=8, pet_lr=1e-4, head_lr=1e-4, demonstrations=4,
    fewshot_trained_layers=2, fewshot_eval_examples=400, eval_examples=300,   # a 22 M-parameter model on 2 cores
    multitask_encoder=MINILM, small_task="stsb", aux_task="mrpc", small_examples=400, aux_examples=800,
    multitask_trained_layers=1, multitask_steps=40, multitask_lr=5e-4, multitask_batch_size=16,
    sampling_temperature=2.0, multitask_seeds=2, multitask_max_length=64,   # each gap: 3 to 12 times its spread
)}
PROMPTING[FULL] = replace(  # PET trained 250 steps at lr 1e-5 (Schick & Schütze, 2021); every layer trains
    PROMPTING[QUICK], mlm_model="bert-base-uncased", max_length=128, fewshot_k=(8, 16, 32, 64), seeds=5,
    fewshot_steps=250, fewshot_batch_size=16, pet_lr=1e-5, head_lr=2e-5, demonstrations=8,
    fewshot_trained_layers=None, fewshot_eval_examples=None, eval_examples=None, multitask_encoder="bert-base-uncased",
    small_examples=1000, aux_examples=None, multitask_trained_layers=None, multitask_steps=200, multitask_lr=2e-5,
    multitask_seeds=3, multitask_max_length=128,
)
SECONDS["08_prompting_and_few_shot"] = 220.0   # its masked LM is MiniLM-sized since issue 38

# fmt: on


def _assemble(name: str) -> Profile:
    """The profile ``name`` ('quick' or 'full') from the lessons' recipes above."""
    return Profile(
        name=name,
        encoder=ENCODER[name],
        encoder_pooling=ENCODER_POOLING[name],
        mlm_checkpoint=MLM_CHECKPOINT[name],
        mixed_precision=MIXED_PRECISION[name],
        peak_rss_mb_budget=PEAK_RSS_MB[name],
        seconds_budget=DEFAULT_SECONDS if name == QUICK else None,
        seconds_budget_overrides=tuple(SECONDS.items()) if name == QUICK else (),
        masking_examples=MASKING_EXAMPLES[name],
        pretraining=PRETRAINING[name],
        scale_study=SCALE_STUDY[name],
        finetuning=FINETUNING[name],
        pair_tasks=PAIR_TASKS[name],
        seq2seq=SEQ2SEQ[name],
        adaptation=ADAPTATION[name],
        probing=PROBING[name],
        efficiency=EFFICIENCY[name],
        prompting=PROMPTING[name],
    )


PROFILES: dict[str, Profile] = {name: _assemble(name) for name in (QUICK, FULL)}


# ------------------------------------------------------------------------------------------------- derived profiles
def _field_names(obj: Any, into: set[str]) -> set[str]:
    """Every field name in a profile and the recipes nested in it (dicts of recipes included)."""
    if is_dataclass(obj):
        for f in fields(obj):
            into.add(f.name)
            _field_names(getattr(obj, f.name), into)
    elif isinstance(obj, dict):
        for value in obj.values():
            _field_names(value, into)
    elif isinstance(obj, tuple):
        for value in obj:
            _field_names(value, into)
    return into


def _numbers(value: Any) -> bool:
    """A non-empty tuple of ints or floats (not bools)."""
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )


def _capped(obj: Any, caps: dict[str, float]) -> Any:
    """``obj`` with every numeric field named in ``caps`` lowered to the cap (a ``None``, "all of it", becomes the
    cap; in a tuple of numbers, each one, repeats dropped), at any depth; other fields unchanged."""
    if isinstance(obj, dict):
        return {k: _capped(v, caps) for k, v in obj.items()}
    if isinstance(obj, tuple) and any(is_dataclass(v) for v in obj):
        return tuple(_capped(v, caps) for v in obj)
    if not is_dataclass(obj):
        return obj
    changes: dict[str, Any] = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        if f.name in caps and (value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))):
            cap = caps[f.name]
            new = cap if value is None else min(value, cap)
            changes[f.name] = type(value)(new) if value is not None else new
        elif f.name in caps and _numbers(value):  # a tuple of sizes (07's batch sizes): each capped, repeats dropped
            changes[f.name] = tuple(dict.fromkeys(type(v)(min(v, caps[f.name])) for v in value))
        else:
            new_value = _capped(value, caps)
            if new_value is not value:
                changes[f.name] = new_value
    return replace(obj, **changes) if changes else obj


def derive(
    base: Profile, name: str, *, caps: dict[str, float], overrides: dict[str, Any] | None = None, **fields_: Any
) -> Profile:
    """A profile made from ``base``: every field named in ``caps`` lowered to its cap wherever it occurs (the
    profile's own fields and its recipes'), then ``overrides`` set by dotted path (``"finetuning.squad.epochs"``),
    then the profile's own ``fields_``. Anything not named stays as in ``base``. Unknown names are errors."""
    known = _field_names(base, set())
    unknown = sorted(set(caps) - known)
    if unknown:
        raise ValueError(
            f"derive({name!r}): no profile or recipe field called {', '.join(map(repr, unknown))}. "
            f"Accepted: {', '.join(sorted(known))}."
        )
    profile = replace(_capped(base, caps), name=name, **fields_)
    for path, value in (overrides or {}).items():
        profile = _set_path(profile, path.split("."), value, path)
    return profile


def _set_path(obj: Any, parts: list[str], value: Any, path: str) -> Any:
    head, rest = parts[0], parts[1:]
    if isinstance(obj, dict):
        if head not in obj:
            raise ValueError(f"{path!r}: no {head!r} here; accepted: {', '.join(obj)}.")
        return {**obj, head: _set_path(obj[head], rest, value, path) if rest else value}
    names = [f.name for f in fields(obj)] if is_dataclass(obj) else []
    if head not in names:
        raise ValueError(f"{path!r}: {type(obj).__name__} has no field {head!r}; accepted: {', '.join(names)}.")
    return replace(obj, **{head: _set_path(getattr(obj, head), rest, value, path) if rest else value})


def _field_type(owner: Any, name: str) -> tuple[type, ...]:
    """The types a dataclass field (or a dict of recipes' entry) is declared to hold: ``float | None`` ->
    (float, NoneType)."""
    if not is_dataclass(owner):
        return (type(owner[name]),)
    hint = typing.get_type_hints(type(owner))[name]
    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return tuple(typing.get_origin(a) or a for a in args)


def _parsed(text: str, accepted: tuple[type, ...], path: str) -> Any:
    """A setting's value as its field's type: ``3e-5`` for a float, ``12`` for an int, ``True``, ``None``, a
    tuple such as ``(0, 5)``, or a bare word for a string field."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text  # a bare word: a checkpoint or task name
    if isinstance(value, int) and not isinstance(value, bool) and float in accepted and int not in accepted:
        value = float(value)
    if isinstance(value, list) and tuple in accepted:
        value = tuple(value)
    if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
        names = " or ".join("None" if t is type(None) else t.__name__ for t in accepted)
        raise ValueError(f"setting {path}={text!r}: the field holds {names}; give a value of that type.")
    return value


def with_settings(profile: Profile, settings: str | Sequence[str]) -> Profile:
    """``profile`` with recipe fields set by dotted path: ``"finetuning.sst2.lr=3e-5"`` (several in a list, or one
    string separated by ``;``). An unknown field is refused with the fields accepted where it was looked for; a value
    of the wrong type with the field's type."""
    items = [x for x in (settings.split(";") if isinstance(settings, str) else settings) if x.strip()]
    for item in items:
        path, sep, text = item.partition("=")
        parts = path.strip().split(".")
        if not sep or not path.strip():
            raise ValueError(f"setting {item.strip()!r}: write it as field.path=value, e.g. finetuning.sst2.lr=3e-5.")
        owner: Any = profile
        for part in parts[:-1]:
            owner = owner.get(part) if isinstance(owner, dict) else getattr(owner, part, None)
        known = owner is not None and (parts[-1] in owner if isinstance(owner, dict) else hasattr(owner, parts[-1]))
        value = _parsed(text.strip(), _field_type(owner, parts[-1]), path.strip()) if known else None
        profile = _set_path(profile, parts, value, path.strip())  # an unknown field: its error names what exists
    return profile


# The rehearsal: the full profile's code path on a CPU in minutes. Only counts are capped; batch sizes, lengths,
# learning rates, precision, model shapes of what the course trains itself, generation settings stay as in `full`.
# fmt: off
REHEARSAL_CAPS: dict[str, float] = {
    "masking_examples": 2000, "train_examples": 128, "eval_examples": 64, "test_examples": 64, "steps": 12,
    "warmup_steps": 3, "eval_every": 6, "eval_blocks": 8, "epochs": 1, "seeds": 2, "multitask_seeds": 2,
    "regime_steps": 12, "regime_seeds": 2, "fewshot_steps": 6, "multitask_steps": 6, "family_steps": 12,
    "fact_steps": 6, "transfer_examples": 256, "train_sentences": 200,
    "eval_sentences": 100, "crows_pairs": 100, "sense_examples": 60, "small_examples": 128, "aux_examples": 128,
    "corpus_sentences": 2000, "timing_seconds": 0.05, "probe_epochs": 2, "batch_size": 16, "family_batch_size": 16,
    "inference_batches": 32, "inference_lengths": 128,
    # 03d's held-out SQuAD articles when split by article (8 otherwise): each of Exercise 4's trials measures every
    # held-out question; 3 articles were too few to expose one of its wrong answers (2026-11-29)
    "heldout_articles": 5,
}
PROFILES["rehearsal"] = derive(
    PROFILES["full"], "rehearsal", caps=REHEARSAL_CAPS,
    # SQuAD's training split is not in the offline mirror: train and evaluate on articles of its validation split,
    # as the quick profile does (the full profile's own split is the one branch of lesson 03d left untried).
    overrides={"finetuning.squad.split_by_article": True},
    seconds_budget=180.0, peak_rss_mb_budget=6144.0,
)
# fmt: on


def default_profile_name() -> str:
    """``full`` when a CUDA device is present, else ``quick``."""
    return "full" if torch.cuda.is_available() else "quick"


_active: dict[str, str] = {}  # the profile ``session.setup`` chose in this process


def use_profile(name: str) -> None:
    """Make ``name`` the running profile of this process (``session.setup`` calls this): claims are checked in it and
    the training loops follow its mixed precision."""
    if name not in PROFILES:
        raise ValueError(f"Unknown profile {name!r}; accepted: {', '.join(PROFILES)}.")
    _active["profile"] = name


def active_profile() -> str:
    """The profile ``setup`` chose, else the one ``$COURSE_PROFILE`` (or the machine) names."""
    return _active.get("profile") or get_profile().name


def get_profile(name: str | None = None) -> Profile:
    """Return the profile called ``name``; ``None`` reads ``$COURSE_PROFILE``, then falls back to the default. Fields
    set in ``$COURSE_SET`` (``with_settings``) apply to whichever profile is returned."""
    chosen = name if name is not None else os.environ.get(PROFILE_ENV) or default_profile_name()
    key = chosen.strip().lower()
    if key not in PROFILES:
        source = "argument" if name is not None else f"${PROFILE_ENV}"
        raise ValueError(
            f"Unknown course profile {chosen!r} (from the {source}). Accepted: {', '.join(sorted(PROFILES))}. "
            f"Leave {PROFILE_ENV} unset to get 'full' on a CUDA machine and 'quick' otherwise."
        )
    settings = os.environ.get(SET_ENV, "")
    return with_settings(PROFILES[key], settings) if settings.strip() else PROFILES[key]
