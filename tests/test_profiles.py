import pytest

from course_utils.profiles import PROFILES, get_profile


def test_every_notebook_has_its_own_budget_and_every_budget_a_notebook():
    from pathlib import Path

    from course_utils.profiles import SECONDS

    notebooks = {p.stem for p in (Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9]*.ipynb")}
    assert set(SECONDS) == notebooks
    quick = get_profile("quick")
    assert all(quick.seconds_budget_for(name) == seconds for name, seconds in SECONDS.items())
    assert get_profile("full").seconds_budget_for("01_masking") is None  # the full profile has no budget


def test_the_full_profile_loads_the_hub_checkpoints_and_the_quick_one_only_offline_ones():
    from course_utils.resources import OFFLINE_CHECKPOINTS

    quick, full = get_profile("quick"), get_profile("full")
    for field_ in ("encoder", "mlm_checkpoint", "course_model", "sentence_encoder"):
        assert getattr(quick, field_) in OFFLINE_CHECKPOINTS, field_
    assert full.encoder == full.mlm_checkpoint == "bert-base-uncased"
    assert (
        set(quick.seq2seq.models) <= set(OFFLINE_CHECKPOINTS) and quick.adaptation.general_model in OFFLINE_CHECKPOINTS
    )


def test_environment_variable_and_case(monkeypatch):
    monkeypatch.setenv("COURSE_PROFILE", "FULL")
    assert get_profile().name == "full"
    assert get_profile("quick").name == "quick"  # an explicit argument wins


@pytest.mark.parametrize("cuda, expected", [(True, "full"), (False, "quick")])
def test_default_follows_the_device(monkeypatch, cuda, expected):
    import torch

    monkeypatch.delenv("COURSE_PROFILE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    assert get_profile().name == expected


def test_unknown_profile_is_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"Unknown course profile 'fast'.*Accepted: full, quick, rehearsal"):
        get_profile("fast")
    monkeypatch.setenv("COURSE_PROFILE", "medium")
    with pytest.raises(ValueError, match=r"'medium' \(from the \$COURSE_PROFILE\)"):
        get_profile()


@pytest.mark.parametrize("name", ["quick", "full"])
def test_pretraining_recipes_are_consistent(name):
    p = get_profile(name)
    r = p.pretraining
    assert 0 < r.warmup_steps < r.steps and r.eval_every <= r.steps and r.size.hidden % r.size.heads == 0
    assert p.scale_study.eval_every <= r.steps and r.steps % p.scale_study.eval_every == 0
    assert all(s.hidden * s.layers < r.size.hidden * r.size.layers for s in p.scale_study.sizes)  # main run is largest


def test_the_course_checkpoint_has_a_recipe_of_its_own_and_budgets_can_be_per_notebook():
    from course_utils.course_bert import COURSE_BERT, checkpoint_dir, course_recipe
    from course_utils.profiles import COURSE_BERT_RECIPE, COURSE_MLM_CHECKPOINT

    quick = get_profile("quick")
    assert course_recipe() is COURSE_BERT_RECIPE and quick.course_model == COURSE_BERT
    # 06 and 08 ask the course's English MLM (issue 38); 03a, 05 and 06's taught facts keep the tiny BERT
    assert quick.mlm_checkpoint == COURSE_MLM_CHECKPOINT and quick.adaptation.general_model == COURSE_BERT
    assert quick.probing.fact_model == COURSE_BERT
    # the live lesson run is not the checkpoint: retuning it must not move every learner's cached checkpoint
    assert quick.pretraining != COURSE_BERT_RECIPE and checkpoint_dir(quick.pretraining) != checkpoint_dir()
    assert get_profile("full").mlm_checkpoint == "bert-base-uncased"
    # its recipe is pinned: the shipped checkpoint carries this key, and another recipe would be trained on first use
    assert checkpoint_dir().name == "bert-books-90b828190787", "COURSE_BERT_RECIPE changed: update this key on purpose"


@pytest.mark.parametrize("name", ["quick", "full"])
def test_every_profile_has_the_fine_tuning_recipes_lesson_03_reads(name):
    p = get_profile(name)
    for task in ["sst2", "sst2_small", "sst2_tiny_bert", "mrpc", "rte", "stsb", "cola", "conll2003", "squad"]:
        r = p.finetune(task)
        assert r.epochs > 0 and r.lr > 0 and 0 <= r.warmup_ratio < 1 and r.max_length <= 512
    squad = p.finetune("squad")
    assert squad.stride < squad.max_length // 2
    eval_length, eval_stride = squad.eval_windows
    assert eval_length >= squad.max_length and eval_stride < eval_length // 2
    assert p.finetune("sst2").eval_windows == (128, 128)  # no evaluation windows of its own: the training ones
    with pytest.raises(ValueError, match=r"no fine-tuning recipe for 'mnli'. Accepted: sst2, sst2_small"):
        p.finetune("mnli")
    # 03b's Trainer section: GLUE tasks with a recipe, STS-B (its cross-encoder feeds section 3) always among them
    assert "stsb" in p.pair_tasks and set(p.pair_tasks) <= {"mrpc", "rte", "stsb", "cola"}
    assert all(p.finetune(task) for task in p.pair_tasks)


def test_the_pair_tasks_can_be_widened_from_the_environment():
    """03b's 'what to try next' puts RTE and CoLA back into the quick run through COURSE_SET."""
    from course_utils.profiles import with_settings

    wider = with_settings(get_profile("quick"), "pair_tasks=('mrpc', 'rte', 'stsb', 'cola')")
    assert wider.pair_tasks == ("mrpc", "rte", "stsb", "cola")
    assert get_profile("full").pair_tasks == wider.pair_tasks


def test_news_summarization_is_full_profile_only_and_hub_only():
    from course_utils.registry import entry
    from course_utils.resources import dataset_available

    assert PROFILES["quick"].seq2seq.news is None  # offline there is no news set to fine-tune on
    news = PROFILES["full"].seq2seq.news
    assert entry(news.dataset).hub == news.dataset and not entry(news.dataset).shipped
    assert not dataset_available(news.dataset)[0]  # the hub's stand-in lacks it: the notebook must skip, not fail
    assert news.max_target_length <= news.max_source_length and news.lead_words > 0


@pytest.mark.parametrize("name", ["quick", "full"])
def test_lesson_07_recipe_fits_its_models(name):
    r = get_profile(name).efficiency
    layers = 6 if name == "quick" else 12  # all-MiniLM-L6-v2 and bert-base-uncased
    assert 0 < len(r.student_layers) < layers and list(r.student_layers) == sorted(set(r.student_layers))
    assert all(0 <= i < layers for i in r.student_layers)
    assert r.micro_batch >= 1 and r.accumulation_steps >= 2 and r.temperature >= 1 and r.timing_seconds > 0
    assert max(r.inference_lengths) <= 512 and r.selective.train_examples != 0
    assert r.transfer_examples is None or r.transfer_examples >= r.selective.train_examples


@pytest.mark.parametrize("name", ["quick", "full"])
def test_lesson_08_recipe_names_real_tasks_and_the_issues_k(name):
    from course_utils.glue import glue_task

    r = get_profile(name).prompting
    # a curve over k: >= 3 points in full; quick keeps k = 8 and 32 (its k = 64 row, 6 of 18 runs, was within noise)
    assert list(r.fewshot_k) == sorted(set(r.fewshot_k)) and len(r.fewshot_k) >= (3 if name == "full" else 2)
    assert r.seeds >= 3 and r.multitask_seeds >= 2
    assert all(k % 2 == 0 for k in r.fewshot_k)  # each run draws half of each class
    assert r.small_task != r.aux_task and glue_task(r.small_task) and glue_task(r.aux_task)
    assert r.small_examples is None or r.aux_examples is None or r.small_examples < r.aux_examples
    assert r.sampling_temperature >= 1 and r.multitask_steps > 0 and r.max_length <= 512
    assert r.mlm_model == get_profile(name).mlm_checkpoint  # the MLM with a head that lessons 05-06 use


def _leaves(obj, path=""):
    """(dotted path, value) of every field of a profile, at any depth (recipes, dicts of recipes, tuples of sizes)."""
    from dataclasses import fields, is_dataclass

    if is_dataclass(obj):
        for f in fields(obj):
            yield from _leaves(getattr(obj, f.name), f"{path}.{f.name}" if path else f.name)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, f"{path}.{key}")
    else:
        yield path, obj


def test_the_rehearsal_is_full_with_only_counts_capped():
    """Everything the full profile decides stays (checkpoints, lengths, learning rates, precision, accumulation);
    only the counts and batch sizes named in REHEARSAL_CAPS shrink, each to at most its cap (in a tuple of sizes,
    each one), and SQuAD trains on validation articles (the mirror's only split)."""
    from course_utils.profiles import REHEARSAL_CAPS

    full, rehearsal = dict(_leaves(get_profile("full"))), dict(_leaves(get_profile("rehearsal")))
    assert full.keys() == rehearsal.keys()
    own = {"name", "seconds_budget", "peak_rss_mb_budget", "finetuning.squad.split_by_article"}
    changed = {path for path in full if full[path] != rehearsal[path]} - own
    for path in changed:
        field = path.rsplit(".", 1)[-1]
        assert field in REHEARSAL_CAPS, f"{path} changed but is not a capped count"
        cap = REHEARSAL_CAPS[field]
        if isinstance(full[path], tuple):  # 07's timing grid: each size capped, the grid kept in order
            assert max(rehearsal[path]) <= cap and list(rehearsal[path]) == sorted(set(rehearsal[path])), path
            assert set(rehearsal[path]) <= {min(v, cap) for v in full[path]}, path
            continue
        assert rehearsal[path] <= cap and (full[path] is None or rehearsal[path] <= full[path]), path
    assert {p.rsplit(".", 1)[-1] for p in changed} >= {"steps", "train_examples", "epochs", "batch_size"}  # they bite
    assert rehearsal["efficiency.accumulation_steps"] > 1  # accumulation, a branch of its own, is kept
    assert rehearsal["finetuning.squad.split_by_article"] is True and rehearsal["mixed_precision"]


def test_deriving_a_profile_refuses_unknown_fields():
    from course_utils.profiles import derive

    with pytest.raises(ValueError, match=r"no profile or recipe field called 'stepz'.*Accepted: .*steps"):
        derive(get_profile("full"), "x", caps={"stepz": 3})
    with pytest.raises(ValueError, match=r"'finetuning.sst3.epochs': no 'sst3' here; accepted: sst2"):
        derive(get_profile("full"), "x", caps={}, overrides={"finetuning.sst3.epochs": 1})
    with pytest.raises(ValueError, match=r"PretrainRecipe has no field 'stepz'; accepted: vocab_size"):
        derive(get_profile("full"), "x", caps={}, overrides={"pretraining.stepz": 1})


def test_any_recipe_field_can_be_set_for_a_run(monkeypatch):
    """$COURSE_SET (run_course --set) changes the fields it names, typed as the field is, and nothing else."""
    from course_utils.profiles import SET_ENV

    quick = get_profile("quick")
    monkeypatch.setenv(SET_ENV, "finetuning.sst2.lr=3e-5; seq2seq.epochs=1; efficiency.student_layers=(0, 3)")
    set_ = get_profile("quick")
    assert set_.finetune("sst2").lr == 3e-5 and set_.seq2seq.epochs == 1.0 and isinstance(set_.seq2seq.epochs, float)
    assert set_.efficiency.student_layers == (0, 3)
    changed = {path for path, value in _leaves(quick) if dict(_leaves(set_))[path] != value}
    assert changed == {"finetuning.sst2.lr", "seq2seq.epochs", "efficiency.student_layers"}


@pytest.mark.parametrize(
    "setting, message",
    [
        ("finetuning.sst2.lrr=1", r"FinetuneRecipe has no field 'lrr'; accepted: train_examples, epochs, lr,"),
        ("finetuning.sst9.lr=1", r"no 'sst9' here; accepted: sst2, sst2_small"),
        ("finetuning.sst2.lr=fast", r"the field holds float; give a value of that type"),
        ("finetuning.sst2.lr", r"write it as field.path=value"),
    ],
)
def test_a_setting_that_names_no_field_or_the_wrong_type_is_refused(monkeypatch, setting, message):
    from course_utils.profiles import SET_ENV

    monkeypatch.setenv(SET_ENV, setting)
    with pytest.raises(ValueError, match=message):
        get_profile("quick")


def test_a_recipe_prints_the_fields_its_profile_sets_and_not_the_ones_it_leaves():
    """Issue 39: the setup cell prints a recipe; SST-2's must not show SQuAD's window stride. Every field is still
    in ``asdict``."""
    from dataclasses import asdict

    from course_utils.profiles import PROFILES

    sst2, squad = PROFILES["quick"].finetune("sst2"), PROFILES["quick"].finetune("squad")
    assert repr(sst2) == "FinetuneRecipe(train_examples=10000, epochs=1, lr=0.0002, batch_size=32, max_length=128)"
    assert "stride=32" in repr(squad) and "heldout_articles" not in repr(squad)
    assert "stride" in asdict(sst2) and "heldout_articles" in asdict(squad)
    nested = repr(PROFILES["quick"].adaptation)
    assert "finetune=FinetuneRecipe(" in nested and "warmup_ratio" not in nested
