"""Where a CPU training step's time goes, and what slows it: one lesson's training steps timed under each setting.

    python -m course_tools.bench steps                  # 02, 03c and 03d under every setting below (about 10 min)
    python -m course_tools.bench steps --lessons 03c --settings native,neighbour+passive
    python -m course_tools.bench_steps 03c 40           # one lesson, one process, as the environment is now

Each lesson's steps are the lesson's own: the quick profile's recipe, the lesson's data, the course's training loop
(``fine_tune`` for 03c and 03d, ``pretrain_mlm`` for 02). Each setting runs in a fresh process, because OpenMP, oneDNN
and MKL read their environment once, when torch loads:

- ``native``: as a student's notebook runs (every core, the best instruction set this CPU has);
- ``avx2``: AVX2 code paths forced on (``ATEN_CPU_CAPABILITY``, ``ONEDNN_MAX_CPU_ISA``, ``MKL_ENABLE_INSTRUCTIONS``),
  to tell whether an AVX2-only machine is slower for its instruction set;
- ``1-thread``: ``OMP_NUM_THREADS=1``; ``passive``: ``OMP_WAIT_POLICY=PASSIVE`` (a thread that waits sleeps);
- ``neighbour``, ``neighbour+passive``, ``neighbour+1-thread``: the same with another process busy on one core
  (a pure-Python loop), as on a shared machine or a laptop with something else running: every thread of the step's
  OpenMP team spin-waits at each barrier for the one that lost its core (``OMP_WAIT_POLICY=PASSIVE`` makes them sleep).

Introduced for issue 52 (the slower machine type); the findings are in the maintainers' guide."""

from __future__ import annotations

import os
import subprocess
import sys
import time

AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
SETTINGS: dict[str, tuple[dict[str, str], bool]] = {  # name -> (environment, a busy neighbour on one core)
    "native": ({}, False),
    "avx2": (AVX2, False),
    "1-thread": ({"OMP_NUM_THREADS": "1"}, False),
    "passive": ({"OMP_WAIT_POLICY": "PASSIVE"}, False),
    "neighbour": ({}, True),
    "neighbour+passive": ({"OMP_WAIT_POLICY": "PASSIVE"}, True),
    "neighbour+1-thread": ({"OMP_NUM_THREADS": "1"}, True),
}
LESSONS = {"02": 150, "03c": 50, "03d": 12}  # lesson -> steps timed (each about 10-12 s natively on 2 cores)


def lesson_steps(lesson: str, steps: int) -> float:
    """Train ``steps`` steps of ``lesson``'s model as the lesson does -> seconds per step (the data prepared first,
    outside the timing; warmup and the first step's allocations inside, as in the lesson)."""
    import torch

    from course_utils import load_dataset, load_model, load_tokenizer
    from course_utils.profiles import get_profile

    profile = get_profile("quick")
    if lesson == "02":
        from transformers import BertForMaskedLM

        from course_utils.course_bert import book_blocks
        from course_utils.pretraining import bert_config, pretrain_mlm

        recipe = profile.pretraining
        tokenizer, blocks, eval_blocks, _ = book_blocks(recipe)
        torch.manual_seed(recipe.seed)
        model = BertForMaskedLM(bert_config(len(tokenizer), recipe.size, recipe.block_length, recipe.dropout))
        start = time.perf_counter()
        pretrain_mlm(
            model,
            tokenizer,
            blocks,
            eval_blocks[:1],
            steps=steps,
            batch_size=recipe.batch_size,
            lr=recipe.lr,
            warmup_steps=min(recipe.warmup_steps, steps),
            eval_every=steps,
            progress=False,
        )
        return (time.perf_counter() - start) / steps
    from course_utils.finetuning import fine_tune

    tokenizer = load_tokenizer(profile.encoder)
    collate = None
    if lesson == "03c":
        from transformers import AutoModelForTokenClassification, DataCollatorForTokenClassification

        from course_utils.token_classification import encode_words

        recipe = profile.finetune("conll2003")
        rows = load_dataset("eriktks/conll2003", "conll2003")["train"].shuffle(seed=recipe.seed)
        rows = rows.select(range(recipe.batch_size * steps))
        train, _ = encode_words(tokenizer, rows["tokens"], rows["ner_tags"], recipe.max_length)
        model = load_model(AutoModelForTokenClassification, profile.encoder, num_labels=9)
        collate = DataCollatorForTokenClassification(tokenizer)
    elif lesson == "03d":
        from transformers import AutoModelForQuestionAnswering

        from course_utils.question_answering import encode_for_training

        recipe = profile.finetune("squad")
        rows = load_dataset("rajpurkar/squad", "plain_text")["validation"].shuffle(seed=recipe.seed)
        windows = encode_for_training(
            tokenizer, rows.select(range(2 * recipe.batch_size * steps)), recipe.max_length, recipe.stride
        )
        train = [w for w in windows if w["start_positions"] > 0][: recipe.batch_size * steps]  # the lesson's windows
        model = load_model(AutoModelForQuestionAnswering, profile.encoder)
    else:
        raise ValueError(f"no training step of lesson {lesson!r} here; accepted: {', '.join(LESSONS)}")
    torch.manual_seed(recipe.seed)
    start = time.perf_counter()
    losses = fine_tune(
        model, tokenizer, train, epochs=1, lr=recipe.lr, batch_size=recipe.batch_size, collate=collate, progress=False
    )
    return (time.perf_counter() - start) / len(losses)


def measure(lesson: str, steps: int, setting: str) -> float:
    """``lesson``'s seconds per step under ``setting``, in a fresh process (with its busy neighbour, if any)."""
    env_changes, neighbour = SETTINGS[setting]
    env = {**os.environ, **env_changes, "COURSE_QUIET": "1", "PYTHONWARNINGS": "ignore"}
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if neighbour else None
    try:
        done = subprocess.run(
            [sys.executable, "-m", "course_tools.bench_steps", lesson, str(steps)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    if done.returncode != 0:
        raise RuntimeError(f"lesson {lesson} under {setting!r} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def bench_steps(lessons: list[str], settings: list[str]) -> dict:
    """The table: each lesson's milliseconds per step under each setting, and each over ``native`` -> figures."""
    for name in settings:
        if name not in SETTINGS:
            raise ValueError(f"no setting {name!r}; accepted: {', '.join(SETTINGS)}")
    from course_utils.efficiency import device_name

    print(f"{device_name('cpu')}; each cell: ms per training step (x native)")
    figures: dict = {}
    width = max(len(s) for s in settings)
    print(f"{'setting':<{width}}  " + "  ".join(f"{lesson:>16}" for lesson in lessons))
    for setting in settings:
        cells = []
        for lesson in lessons:
            ms = 1000 * measure(lesson, LESSONS[lesson], setting)
            figures[f"{lesson}_{setting.replace('+', '_').replace('-', '_')}_ms"] = ms
            base = figures.get(f"{lesson}_native_ms")
            cells.append(f"{ms:8.1f}" + (f" ({ms / base:4.2f}x)" if base else " " * 8))
        print(f"{setting:<{width}}  " + "  ".join(cells), flush=True)
    return figures


if __name__ == "__main__":
    from course_utils.quiet import quiet_libraries

    quiet_libraries()
    print(lesson_steps(sys.argv[1], int(sys.argv[2])))
