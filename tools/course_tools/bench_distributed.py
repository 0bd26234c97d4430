"""Do the training loops give the same model in N processes as in one? (``python -m course_tools.bench distributed``)

The same pretraining run (``pretrain_mlm``: a small BERT on the course's books) and fine-tuning run (``fine_tune``:
a small BERT classifier on SST-2) are trained twice with the same global batch and seed: once in one process, once
in ``processes`` CPU processes under ``accelerate launch`` (gloo). Dropout is off, because each process draws its own
dropout masks; everything else is the loops as the lessons use them. The check prints the largest difference
between corresponding parameters, last ``max parameter difference <x>``; the goal is at most 1e-5 after 20 steps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GOAL = 1e-5
MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # a fixed vocabulary, the same in every process


def _small_bert(vocab: int, head: str, seed: int):
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

    config = BertConfig(
        vocab_size=vocab,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout=0.0,
        num_labels=2,
    )
    torch.manual_seed(seed)
    return (BertForMaskedLM if head == "mlm" else BertForSequenceClassification)(config)


def worker(loop: str, steps: int, batch_size: int, out: Path, seed: int = 0) -> None:
    """Train one loop (``mlm`` or ``finetune``) for ``steps`` steps; the main process saves the parameters to
    ``out``."""
    import torch
    from accelerate.state import PartialState

    from course_utils.course_bert import load_books
    from course_utils.finetuning import encode_task, fine_tune
    from course_utils.packing import pack_blocks
    from course_utils.pretraining import pretrain_mlm
    from course_utils.resources import load_dataset, load_tokenizer

    tokenizer = load_tokenizer(MINILM)
    if loop == "mlm":
        blocks = pack_blocks(load_books()[0][:2000], tokenizer, 64)
        model = _small_bert(len(tokenizer), "mlm", seed)
        pretrain_mlm(
            model,
            tokenizer,
            blocks[:-8],
            blocks[-8:],
            steps=steps,
            batch_size=batch_size,
            lr=1e-3,
            warmup_steps=2,
            eval_every=steps,
            seed=seed,
            mixed_precision=False,
            progress=False,
        )
    else:
        rows = load_dataset("nyu-mll/glue", "sst2", split="train").select(range(steps * batch_size))
        model = _small_bert(len(tokenizer), "classifier", seed)
        fine_tune(
            model,
            tokenizer,
            encode_task(tokenizer, rows, "sst2", 64),
            epochs=1,
            lr=1e-3,
            batch_size=batch_size,
            seed=seed,
            mixed_precision=False,
            progress=False,
        )
    state = PartialState()
    state.wait_for_everyone()
    if state.is_main_process:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, out)


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"{what} failed (exit {done.returncode}):\n{tail}")


def compare(processes: int = 2, steps: int = 20, batch_size: int = 16) -> float:
    """Train each loop in one process and in ``processes`` processes; print the differences; return the largest."""
    import torch

    if processes < 2:
        raise ValueError(f"processes={processes}: the check compares one process with several; accepted: 2 or more.")
    if batch_size % processes:
        raise ValueError(
            f"batch_size={batch_size} does not divide among {processes} processes; accepted: a multiple of {processes}."
        )
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent)) or shutil.which("accelerate")
    if launcher is None:
        raise FileNotFoundError(
            "the `accelerate` command is not installed in this environment (pip install accelerate)"
        )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for loop in ("mlm", "finetune"):
            single, multi = Path(tmp) / f"{loop}-1.pt", Path(tmp) / f"{loop}-{processes}.pt"
            args = ["--worker", loop, "--steps", str(steps), "--batch-size", str(batch_size)]
            _run(
                [sys.executable, "-m", "course_tools.bench_distributed", *args, "--out", str(single)],
                f"{loop} in one process",
            )
            _run(
                [
                    launcher,
                    "launch",
                    "--cpu",
                    "--num_processes",
                    str(processes),
                    "--num_machines",
                    "1",
                    "--mixed_precision",
                    "no",
                    "--dynamo_backend",
                    "no",
                    "-m",
                    "course_tools.bench_distributed",
                    *args,
                    "--out",
                    str(multi),
                ],
                f"{loop} in {processes} processes",
            )
            a, b = torch.load(single), torch.load(multi)
            diff = max(float((a[k].float() - b[k].float()).abs().max()) for k in a)
            moved = max(float((a[k].float() - _small_start(loop, k)).abs().max()) for k in a)
            name = "pretraining (pretrain_mlm)" if loop == "mlm" else "fine-tuning (fine_tune)"
            print(
                f"{name}: {steps} steps of a global batch of {batch_size}; parameters moved up to {moved:.3g} from "
                f"their start; 1 vs {processes} processes differ by at most {diff:.3g}"
            )
            worst = max(worst, diff)
    print(f"goal: at most {GOAL:g}")
    print(f"max parameter difference {worst:.3g}")
    return worst


_STARTS: dict = {}


def _small_start(loop: str, key: str):
    """A parameter's value before training (to show that training moved it by far more than the difference)."""
    if loop not in _STARTS:
        from course_utils.resources import load_tokenizer

        vocab = len(load_tokenizer(MINILM))
        _STARTS[loop] = {
            k: v.float()
            for k, v in _small_bert(vocab, "mlm" if loop == "mlm" else "classifier", 0).state_dict().items()
        }
    return _STARTS[loop][key]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", choices=["mlm", "finetune"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    os.environ.setdefault("COURSE_QUIET", "1")
    from course_utils.quiet import quiet_libraries

    quiet_libraries()
    if args.worker:
        worker(args.worker, args.steps, args.batch_size, args.out)
        return 0
    return 0 if compare(args.processes, args.steps, args.batch_size) <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
