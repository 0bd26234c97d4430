"""Stand-ins for the full profile's hub checkpoints, so that the full profile can be rehearsed offline on a CPU.

    python -m course_tools.standin_checkpoints build build/rehearsal/hf-cache     # what `make rehearse` does first

A stand-in has the real checkpoint's architecture and config file (in ``standin_configs/`` beside this module: small
public facts), narrowed (hidden width and vocabulary) but as deep as the real one, so every layer index a lesson uses
exists; random weights; and a tokenizer of the real kind trained on the course's books: WordPiece with
bert-base-uncased's special ids for BERT, a Unigram (SentencePiece-style) vocabulary with T5's 100 sentinels for T5,
byte-level BPE for BART. Each is written into a Hugging Face cache folder exactly as a download would be
(``models--<org>--<name>/ snapshots/<revision>/``), so ``from_pretrained("bert-base-uncased")`` finds it with
``HF_HUB_CACHE`` pointing there and ``HF_HUB_OFFLINE=1``. A ``course_standin.json`` beside the config says what it is;
the resolver and ``session.setup`` print it, so a rehearsal never passes for the real model. Nothing here is a
pretrained model. Introduced for the rehearsal of the full profile (``make rehearse``); no lesson imports it."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers
from tokenizers import ByteLevelBPETokenizer, Tokenizer, models, pre_tokenizers, trainers
from transformers import BartTokenizer, BertTokenizer, T5Tokenizer

from course_utils.course_bert import load_books
from course_utils.quiet import quiet_if_asked
from course_utils.resources import STANDIN_MARKER as MARKER
from course_utils.wordpiece import SPECIAL_TOKENS, train_wordpiece

CONFIGS = Path(__file__).parent / "standin_configs"
FORMAT_VERSION = 2


@dataclass(frozen=True)
class StandIn:
    """How one hub checkpoint is stood in for: its kind, the model class its weights are saved as, the narrowing."""

    name: str  # the hub name the lessons ask for
    kind: str  # 'bert', 't5' or 'bart': decides the tokenizer
    weights_class: str  # transformers class whose weights the hub checkpoint holds
    narrow: dict[str, int]  # config fields replaced (width only: the depth stays the real one)
    tokenizer_vocab: int  # pieces learned from the books (the config keeps the real vocab_size)

    @property
    def config_file(self) -> Path:
        return CONFIGS / (self.name.replace("/", "--") + ".json")


STANDINS: dict[str, StandIn] = {
    s.name: s
    for s in (
        StandIn(
            "bert-base-uncased",
            "bert",
            "BertForPreTraining",
            {"hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 256},
            8000,
        ),
        StandIn(
            "t5-small",
            "t5",
            "T5ForConditionalGeneration",
            {"d_model": 64, "d_kv": 16, "num_heads": 4, "d_ff": 256},
            8000,
        ),
        StandIn(
            "facebook/bart-base",
            "bart",
            "BartModel",
            {
                "d_model": 64,
                "encoder_attention_heads": 4,
                "decoder_attention_heads": 4,
                "encoder_ffn_dim": 256,
                "decoder_ffn_dim": 256,
            },
            8000,
        ),
    )
}


def standin(name: str) -> StandIn:
    """The stand-in recipe for hub checkpoint ``name``; a clear error for any other name."""
    if name not in STANDINS:
        raise ValueError(
            f"No stand-in for {name!r}: the rehearsal stands in for the full profile's hub checkpoints "
            f"only. Accepted: {', '.join(STANDINS)}."
        )
    return STANDINS[name]


def real_config(name: str) -> dict[str, Any]:
    """The hub checkpoint's own config.json, as shipped with the course."""
    return json.loads(standin(name).config_file.read_text())


# ------------------------------------------------------------------------------------------------------ tokenizers
def _bert_tokenizer(texts: list[str], vocab_size: int):
    """WordPiece, lower-cased, with bert-base-uncased's layout of special ids: [PAD] 0, [unused0-98], [UNK] 100,
    [CLS] 101, [SEP] 102, [MASK] 103, then the pieces learned from ``texts``."""
    learned = train_wordpiece(texts, vocab_size).get_vocab()
    pieces = [t for t, _ in sorted(learned.items(), key=lambda kv: kv[1]) if t not in SPECIAL_TOKENS]
    order = ["[PAD]", *(f"[unused{i}]" for i in range(99)), "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces]
    return BertTokenizer(vocab={t: i for i, t in enumerate(order)}, do_lower_case=True)


def _t5_tokenizer(texts: list[str], vocab_size: int):
    """A Unigram vocabulary (SentencePiece's model) learned from ``texts``, laid out as T5's: <pad> 0, </s> 1, <unk> 2,
    the pieces, then the 100 sentinels with <extra_id_0> last."""
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    scored = json.loads(tok.to_str())["model"]["vocab"]  # [[piece, log-probability], ...], specials first
    pieces = [(p, s) for p, s in scored if p not in ("<pad>", "</s>", "<unk>")]
    vocab = [
        ("<pad>", 0.0),
        ("</s>", 0.0),
        ("<unk>", 0.0),
        *pieces,
        *((f"<extra_id_{i}>", 0.0) for i in range(99, -1, -1)),
    ]
    return T5Tokenizer(vocab=vocab, extra_ids=100, model_max_length=512)


def _bart_tokenizer(texts: list[str], vocab_size: int):
    """Byte-level BPE (GPT-2's and BART's scheme) learned from ``texts``: <s> 0, <pad> 1, </s> 2, <unk> 3, ...,
    <mask> last."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts, vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], show_progress=False
    )
    vocab = dict(sorted(bpe.get_vocab().items(), key=lambda kv: kv[1]))
    vocab["<mask>"] = len(vocab)
    model = json.loads(bpe._tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return BartTokenizer(vocab=vocab, merges=merges, model_max_length=1024)


_TOKENIZERS = {"bert": _bert_tokenizer, "t5": _t5_tokenizer, "bart": _bart_tokenizer}


# ----------------------------------------------------------------------------------------------------------- build
def revision(spec: StandIn) -> str:
    """A fixed 40-hex 'commit' for the cache layout, changing whenever the recipe does."""
    text = json.dumps(
        [FORMAT_VERSION, spec.name, spec.narrow, spec.tokenizer_vocab, real_config(spec.name)], sort_keys=True
    )
    return hashlib.sha1(text.encode()).hexdigest()


def snapshot_dir(cache: Path, spec: StandIn) -> Path:
    return cache / f"models--{spec.name.replace('/', '--')}" / "snapshots" / revision(spec)


def describe(spec: StandIn, config: dict[str, Any] | None = None) -> str:
    """One line: what the stand-in keeps of the real checkpoint and what it is not."""
    config = config or {**real_config(spec.name), **spec.narrow}
    depth = {
        "bert": f"{config.get('num_hidden_layers')} layers",
        "t5": f"{config.get('num_layers')}+{config.get('num_decoder_layers', config.get('num_layers'))} layers",
        "bart": f"{config.get('encoder_layers')}+{config.get('decoder_layers')} layers",
    }[spec.kind]
    width = config.get("hidden_size") or config.get("d_model")
    return (
        f"REHEARSAL STAND-IN for {spec.name}: its architecture and config, {depth} but {width} wide, RANDOM "
        f"weights, a {spec.kind} tokenizer of {config['vocab_size']:,} pieces trained on the course's books; not the "
        "pretrained model"
    )


def build_standin(spec: StandIn, cache: Path, texts: list[str]) -> Path:
    """Write one stand-in into the Hugging Face cache folder ``cache``; returns its snapshot folder."""
    target = snapshot_dir(cache, spec)
    if (target / MARKER).is_file():
        return target
    config = {**real_config(spec.name), **spec.narrow}
    model_class = getattr(transformers, spec.weights_class)
    config_class = transformers.AutoConfig.for_model(config["model_type"]).__class__
    tokenizer = _TOKENIZERS[spec.kind](texts, spec.tokenizer_vocab)
    # The embedding matrix is as large as the tokenizer: a random model can predict any row, and every row must be a
    # token the tokenizer can print (the real checkpoints' matrices match their vocabularies too, T5's 28 spare rows
    # aside, which a trained T5 never predicts).
    config["vocab_size"] = len(tokenizer)
    torch.manual_seed(0)
    model = model_class(config_class.from_dict(config))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".partial-"))
    try:  # written whole into a temporary folder, then renamed: an interrupted build leaves nothing half-made
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "config.json").write_text(json.dumps(config, indent=2))  # the hub's file, narrowed; nothing else
        (tmp / MARKER).write_text(
            json.dumps(
                {
                    "format": FORMAT_VERSION,
                    "name": spec.name,
                    "narrowed": spec.narrow,
                    "description": describe(spec, config),
                },
                indent=2,
            )
        )
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    refs = target.parent.parent / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "main").write_text(target.name)
    return target


def build_all(cache: Path | str, names: list[str] | None = None) -> dict[str, Path]:
    """Build the stand-ins ``names`` (default: all) into the Hugging Face cache folder ``cache``."""
    quiet_if_asked()
    specs = [standin(n) for n in (names or list(STANDINS))]  # an unknown name fails before anything is built
    cache = Path(cache).expanduser().resolve()
    texts: list[str] = []
    built = {}
    for spec in specs:
        if not (snapshot_dir(cache, spec) / MARKER).is_file() and not texts:
            texts = load_books()[0]
        built[spec.name] = build_standin(spec, cache, texts)
        print(f"[stand-in] {spec.name} <- {built[spec.name]}")
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write the stand-ins into a Hugging Face cache folder")
    build.add_argument("cache", help="the folder HF_HUB_CACHE will point at, e.g. build/rehearsal/hf-cache")
    build.add_argument("names", nargs="*", help=f"which (default: all of {', '.join(STANDINS)})")
    args = parser.parse_args(argv)
    try:
        build_all(args.cache, args.names or None)
    except ValueError as err:
        parser.error(str(err))
    return 0


if __name__ == "__main__":
    sys.exit(main())
