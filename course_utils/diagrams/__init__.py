"""Concept diagrams, drawn with matplotlib (offline, no image files): what a lesson explains with a picture.

* ``mlm_and_nsp`` — lesson 01: BERT's two pretraining objectives (Devlin et al., 2019).
* ``bert_input`` — lesson 02: the input is the sum of token, segment and position embeddings (Devlin et al., 2019).
* ``classification_head`` — lesson 03a: pooling, dropout and one new linear layer on a fine-tuned encoder.
* ``bi_vs_cross_encoder`` — lesson 03b: two sentences encoded apart or read together (Reimers & Gurevych, 2019).
* ``label_alignment`` — lesson 03c: word labels on word pieces, -100 where the loss should not look.
* ``encoder_decoder``, ``span_corruption``, ``bart_noising`` — lesson 04: cross-attention (Vaswani et al., 2017),
  T5's objective (Raffel et al., 2020), BART's noisings (Lewis et al., 2020).
* ``dapt_tapt_pipeline`` — lesson 05: domain- and task-adaptive pretraining (Gururangan et al., 2020).
* ``electra``, ``distillation``, ``albert_factorisation`` — lesson 07 (Clark et al., 2020; Hinton et al., 2015;
  Lan et al., 2020).
* ``pet_pattern`` — lesson 08: a cloze pattern and its verbalizer (Schick & Schütze, 2021).

Each returns the ``matplotlib.figure.Figure`` it drew (the notebook shows it); nothing is computed from a model. The
boxes, arrows and colours they share are in ``drawing``.
"""

from .adaptation import dapt_tapt_pipeline
from .bert_family import albert_factorisation, distillation, electra
from .drawing import COLOURS
from .fine_tuning import bi_vs_cross_encoder, classification_head, label_alignment
from .pretraining import bert_input, mlm_and_nsp
from .prompting import pet_pattern
from .seq2seq import bart_noising, encoder_decoder, span_corruption

__all__ = [
    "COLOURS",
    "albert_factorisation",
    "bart_noising",
    "bert_input",
    "bi_vs_cross_encoder",
    "classification_head",
    "dapt_tapt_pipeline",
    "distillation",
    "electra",
    "encoder_decoder",
    "label_alignment",
    "mlm_and_nsp",
    "pet_pattern",
    "span_corruption",
]
