"""Build and run TRL's ``GRPOTrainer`` on a wikigym env: composition only, no subclassing.

:func:`build_trainer` assembles: the model path (a tiny local model for ``cpu-tiny`` when none
is given), the tokenizer, the dataset, ``environment_factory``, reward sources and callback
of :func:`wikigym.trainers.trl_inputs.trl_inputs` (the recipe behind ``trl_kwargs``), the
``GRPOConfig`` of a preset (:mod:`wikigym.trainers.presets`), vLLM settings
(:mod:`wikigym.trainers.vllm`) and the diagnostics callback.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikigym.envs import ENV_IDS
from wikigym.envs.recipe import env_spec, takes_corpus
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.envs.rewards import PRESETS as REWARD_PRESETS
from wikigym.errors import ConfigError, WikigymError
from wikigym.outputs import atomic_output
from wikigym.trainers.adapter import EnvSpec, dataset_rows
from wikigym.trainers.episodes import EpisodeSink
from wikigym.trainers.presets import PRESETS, GRPOPreset, get_preset
from wikigym.trainers.tiny import RECIPE_VERSION as TINY_RECIPE_VERSION
from wikigym.trainers.tokenizer import load_tokenizer

if TYPE_CHECKING:
    from wikigym.trainers.progress import Progress

TINY_MODEL_DIRNAME = f"tiny-model-v{TINY_RECIPE_VERSION}"
"""The plain tiny model's cache folder: one per recipe version, so a cache an older wikigym
built is left alone rather than refused."""
ROLLOUTS = ("environment_factory", "rollout_func")
VLLM_MODES = ("colocate", "server", "off")


@dataclass
class TrainConfig:
    """What ``wikigym train grpo`` runs: each field is an option of the command
    (:mod:`wikigym.cli_args`), with its ``help`` and, where they apply, ``choices`` and ``min``."""

    output_dir: str = field(metadata={"help": "Run directory (checkpoints, metrics.jsonl)."})
    model: str | None = field(
        default=None,
        metadata={"help": "Model path or hub name; unset with cpu-tiny: the tiny local model."},
    )
    env: str = field(
        default=WIKI_SEARCH, metadata={"help": "Gymnasium env id.", "choices": ENV_IDS}
    )
    tasks: str | None = field(default=None, metadata={"help": "TaskSet file (WikiSearch)."})
    corpus: str | None = field(default=None, metadata={"help": "Snapshot directory (WikiSearch)."})
    preset: str = field(
        default="cpu-tiny", metadata={"help": "Settings preset.", "choices": sorted(PRESETS)}
    )
    use_vllm: str | None = field(
        default=None,
        metadata={
            "help": "Generate with vLLM colocated or on a server, or not at all (overrides the "
            "preset); unset: the preset's choice.",
            "choices": VLLM_MODES,
        },
    )
    vllm_server_url: str | None = field(
        default=None, metadata={"help": "Base URL of a running `trl vllm-serve` (server mode)."}
    )
    max_steps: int | None = field(
        default=None, metadata={"help": "Optimizer steps (unset: the preset's).", "min": 1}
    )
    reward: str = field(
        default="binary", metadata={"help": "Env reward preset.", "choices": REWARD_PRESETS}
    )
    gamma: float | None = field(
        default=None,
        metadata={"help": "Step decay of the outcome (gamma-decay); unset: off.", "min": 0.0},
    )
    citations: bool = field(
        default=False, metadata={"help": "Add the gated citation/rubric component."}
    )
    max_env_steps: int = field(
        default=8, metadata={"help": "Env step budget per episode.", "min": 1}
    )
    num_rows: int | None = field(
        default=None, metadata={"help": "Dataset rows (tasks/episodes).", "min": 1}
    )
    seed: int = field(
        default=0, metadata={"help": "Seed of data order, sampling and tiny model.", "min": 0}
    )
    diagnostics: bool = field(default=True, metadata={"help": "Diagnostics callback."})
    rollout: str = field(
        default="environment_factory",
        metadata={
            "help": "environment_factory (TRL's tool loop) or rollout_func (episodes driven by "
            "wikigym.trainers.rollout with the trainer's generation).",
            "choices": ROLLOUTS,
        },
    )
    env_kwargs: dict[str, Any] = field(
        default_factory=dict, metadata={"help": "Extra env keyword arguments."}
    )
    overrides: dict[str, Any] = field(
        default_factory=dict,
        metadata={
            "help": "Preset field overrides (GRPOConfig names, and max_turn_tokens: a per-turn "
            "token cap)."
        },
    )
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an existing output directory."}
    )
    quiet: bool = field(
        default=False,
        metadata={
            "help": "No progress output (stage lines, bars, per-step lines); alarms and errors "
            "still print."
        },
    )


@dataclass(frozen=True)
class WikigymOverrides:
    """The names ``--overrides`` takes besides ``GRPOConfig``'s fields (wikigym's own)."""

    max_turn_tokens: int | None = field(
        default=None,
        metadata={
            "help": "Per-turn token cap of one generation call (the generator's max_new_tokens "
            "or vLLM's max_tokens); unset: the whole completion budget.",
            "min": 1,
        },
    )


def check_overrides(overrides: dict[str, Any]) -> None:
    """Refuse, before anything is built or written, an override that is not a ``GRPOConfig``
    field or :class:`WikigymOverrides` name, or whose value is not of the field's type.

    Raises:
        ConfigError: One line naming the field, the type wanted and the value given.
    """
    from trl import GRPOConfig

    from wikigym.cli_args import check_overrides as check

    check(overrides, [WikigymOverrides, GRPOConfig])


def reward_config_for(cfg: TrainConfig) -> Any:
    """The env ``RewardConfig``: the named preset plus the ``--gamma`` / ``--citations`` flags."""
    from wikigym.envs.rewards import RewardConfig

    rc = RewardConfig.from_name(cfg.reward)
    if cfg.gamma is not None:
        rc = replace(rc, gamma=cfg.gamma)
    if cfg.citations and rc.weights.get("citation", 0.0) == 0.0:
        rc = replace(rc.with_weights(citation=0.5), citation_gate=True)
    return rc


def env_spec_for(cfg: TrainConfig) -> EnvSpec:
    """The :class:`EnvSpec` of a run (WikiSearch gets the step budget; python off on CPU
    presets, where the sandbox is not the point)."""
    if cfg.env.removeprefix("wikigym:") not in ENV_IDS:
        raise ConfigError(f"unknown env {cfg.env!r}; expected one of {list(ENV_IDS)}")
    kwargs: dict[str, Any] = {"reward": reward_config_for(cfg), **cfg.env_kwargs}
    if takes_corpus(env_spec(cfg.env)):
        kwargs.setdefault("max_steps", cfg.max_env_steps)
        kwargs.setdefault("python", "off" if cfg.preset == "cpu-tiny" else "auto")
    spec = EnvSpec(env_id=cfg.env, corpus=cfg.corpus, tasks=cfg.tasks, kwargs=kwargs)
    check_env_inputs(spec)
    if uses_cold_start(cfg):
        # The demonstration trains on the level the cold start was fine-tuned on.
        from wikigym.trainers.coldstart import ColdStartRecipe, level_subset

        taskset = spec.taskset()
        if taskset is not None:
            subset = level_subset(taskset, ColdStartRecipe().level)
            spec = replace(spec, tasks=subset)
    return spec


def uses_cold_start(cfg: TrainConfig) -> bool:
    """cpu-tiny on a WikiSearch env with no ``--model``: the run starts from the cached
    cold-start checkpoint (:mod:`wikigym.trainers.coldstart`) on the easy tasks, with its
    compact prompt, through the ``rollout_func`` path (TRL's tool loop would add the tool
    schema to the prompt)."""
    return (
        cfg.preset == "cpu-tiny"
        and not cfg.model
        and takes_corpus(env_spec(cfg.env))
        and "tools" not in cfg.env_kwargs
    )


def check_env_inputs(spec: EnvSpec) -> None:
    """Refuse, before any heavy work, a corpus or TaskSet path that cannot be what it names.

    Raises:
        ConfigError: A path that does not exist, or a corpus/TaskSet for an env without one.
    """
    paths = {"--corpus": spec.corpus, "--tasks": spec.tasks}
    given = [flag for flag, value in paths.items() if isinstance(value, (str, Path))]
    if given and not spec.is_wiki():
        raise ConfigError(f"{spec.env_id} takes no {' or '.join(given)}; drop them")
    if isinstance(spec.corpus, (str, Path)) and not Path(spec.corpus).is_dir():
        raise ConfigError(f"--corpus {spec.corpus} is not a directory; pass a snapshot directory")
    if isinstance(spec.tasks, (str, Path)) and not Path(spec.tasks).is_file():
        raise ConfigError(f"--tasks {spec.tasks} is not a file; pass a TaskSet (.jsonl/.parquet)")


def _looks_like_path(model: str) -> bool:
    """A local path rather than a hub id (``name`` or ``org/name``)."""
    return (
        Path(model).expanduser().exists()
        or model.startswith(("/", ".", "~"))
        or model.count("/") > 1
    )


def check_model(cfg: TrainConfig) -> None:
    """Refuse a run without a usable model before any work (nothing is loaded or built).

    Raises:
        ConfigError: ``cfg.model`` is a local path that is not a model directory, or it is
            missing with a preset other than cpu-tiny.
    """
    if cfg.model:
        path = Path(cfg.model).expanduser()
        if _looks_like_path(cfg.model) and not (path / "config.json").is_file():
            raise ConfigError(
                f"model {cfg.model!r} is not a model directory (no config.json there); pass "
                "--model with a directory written by save_pretrained or a Hugging Face model id"
            )
    elif cfg.preset != "cpu-tiny":
        raise ConfigError(
            f"--model is required with preset {cfg.preset!r}; only cpu-tiny builds a tiny local model"
        )


def resolve_model(
    cfg: TrainConfig, spec: EnvSpec | None = None, progress: Progress | None = None
) -> str:
    """The model path: ``cfg.model``, or (cpu-tiny only) the cold-start checkpoint for a
    WikiSearch ``spec`` (:func:`uses_cold_start`), else the tiny local model; ``progress``
    shows the stages of building them (None: as ``cfg.quiet`` says).

    Raises:
        ConfigError: See :func:`check_model`.
    """
    check_model(cfg)
    if cfg.model:
        return cfg.model
    from wikigym.tasks.defaults import cache_dir
    from wikigym.trainers.progress import Progress
    from wikigym.trainers.tiny import build_tiny_model

    progress = progress or Progress(enabled=not cfg.quiet)
    if spec is not None and uses_cold_start(cfg):
        from wikigym.trainers.coldstart import ColdStartRecipe, build_cold_start_model

        recipe = ColdStartRecipe(seed=cfg.seed, max_env_steps=int(spec.kwargs["max_steps"]))
        return str(build_cold_start_model(spec, cache_dir(), recipe, progress=progress))
    return str(build_tiny_model(cache_dir() / TINY_MODEL_DIRNAME, seed=0, progress=progress))


def grpo_config_kwargs(
    cfg: TrainConfig, preset: GRPOPreset, *, max_env_steps: int
) -> dict[str, Any]:
    """The ``GRPOConfig`` keyword arguments of a run: preset fields, overrides, vLLM mode,
    logging. Plain data (building the config itself checks the hardware, e.g. bf16)."""
    from wikigym.trainers.vllm import vllm_overrides

    check_overrides(cfg.overrides)
    kwargs = preset.grpo_kwargs()
    if cfg.max_steps is not None:
        kwargs["max_steps"] = cfg.max_steps
    kwargs.update(vllm_overrides(cfg.use_vllm, preset, server_url=cfg.vllm_server_url))
    kwargs.update(cfg.overrides)
    if not kwargs["use_vllm"]:
        # IS correction compares vLLM's log-probs with the trainer's; without vLLM there is none.
        kwargs["vllm_importance_sampling_correction"] = False
    if kwargs["beta"] == 0.0:
        kwargs["sync_ref_model"] = False
    turn = kwargs.pop("max_turn_tokens", None)  # checked by check_overrides (WikigymOverrides)
    if turn is not None:
        # One generation call is one turn (wikigym's rollout); vLLM names the cap max_tokens.
        gen = dict(kwargs.get("generation_kwargs") or {})
        gen.setdefault("max_tokens" if kwargs["use_vllm"] else "max_new_tokens", int(turn))
        kwargs["generation_kwargs"] = gen
    try:
        import tensorboard  # noqa: F401

        report_to = ["tensorboard"]
    except ImportError:
        report_to = []
    cpu = preset.name == "cpu-tiny"
    kwargs.update(
        output_dir=cfg.output_dir,
        seed=cfg.seed,
        max_tool_calling_iterations=max_env_steps,
        report_to=report_to,
        save_strategy="no" if cpu else "steps",
        use_cpu=cpu,
        dataloader_num_workers=0,
    )
    return kwargs


def build_grpo_config(cfg: TrainConfig, preset: GRPOPreset, *, max_env_steps: int):  # -> GRPOConfig
    """TRL's ``GRPOConfig`` from :func:`grpo_config_kwargs`."""
    from trl import GRPOConfig

    kwargs = grpo_config_kwargs(cfg, preset, max_env_steps=max_env_steps)
    try:
        with warnings.catch_warnings():
            # transformers 5 renames gradient_checkpointing (TRL's name, the presets' name).
            warnings.filterwarnings("ignore", "`gradient_checkpointing` is deprecated")
            return GRPOConfig(**kwargs)
    except (TypeError, ValueError) as exc:  # an unknown override name, settings TRL refuses
        raise ConfigError(f"GRPOConfig refused the run's settings: {exc}") from exc


def prepare_default_resources(cfg: TrainConfig, progress: Progress) -> None:
    """Build the embedded default world and TaskSet (once, into the cache) when the run uses
    them, as a stage of its own: on a first run it is the first minute of work."""
    if cfg.corpus is not None or cfg.tasks is not None or not takes_corpus(env_spec(cfg.env)):
        return
    from wikigym.tasks.defaults import default_resources, default_tasks_path

    if default_tasks_path().is_file():
        return
    name = "default world and tasks"
    progress.stage(name, "generating and indexing the embedded world, then synthesising its "
                   "default TaskSet (once; cached)")  # fmt: skip
    _, taskset = default_resources(progress=progress.enabled)
    progress.done(name, f"{len(taskset)} tasks")


def run_preset(cfg: TrainConfig) -> GRPOPreset:
    """The preset a run uses: ``cfg.preset``, with the cold start's run settings when the run
    starts from it (:func:`uses_cold_start`; ``--overrides`` still win over both)."""
    preset = get_preset(cfg.preset)
    if uses_cold_start(cfg):
        from wikigym.trainers.coldstart import COLD_START_RUN

        preset = replace(preset, **COLD_START_RUN)
    return preset


def build_trainer(
    cfg: TrainConfig, *, generate: Any = None, progress: Progress | None = None
) -> tuple[Any, Any | None]:
    """The ``GRPOTrainer`` of a run and its diagnostics callback (or None).

    Args:
        cfg: The run.
        generate: With ``cfg.rollout == "rollout_func"``: a
            :data:`~wikigym.trainers.rollout.GenerateFn` that replaces the trainer's own
            generation (a scripted policy, another sampler). Not used otherwise.
        progress: Where the stages and steps are shown (None: on stderr unless
            ``cfg.quiet``).

    Returns:
        ``(trainer, diagnostics)``.
    """
    if cfg.rollout not in ROLLOUTS:
        raise WikigymError(f"unknown rollout {cfg.rollout!r}; expected one of {list(ROLLOUTS)}")
    if generate is not None and cfg.rollout != "rollout_func":
        raise WikigymError("generate= drives the rollout_func path; set rollout='rollout_func'")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from trl import GRPOTrainer

    from wikigym.trainers.diagnostics import DiagnosticsCallback

    preset = run_preset(cfg)
    if preset.name == "cpu-tiny":
        import torch

        # Tiny matrices: thread synchronisation costs more than it gives (14x slower
        # generation with 2 threads on a loaded 2-core machine).
        torch.set_num_threads(1)
    from wikigym.trainers.progress import Progress

    progress = progress or Progress(enabled=not cfg.quiet)
    prepare_default_resources(cfg, progress)
    spec = env_spec_for(cfg)
    check_model(cfg)
    max_env_steps = int(spec.kwargs.get("max_steps", 1))
    args = build_grpo_config(cfg, preset, max_env_steps=max_env_steps)  # checks the settings
    model = resolve_model(cfg, spec, progress)
    tokenizer = load_tokenizer(model)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    cold_start = uses_cold_start(cfg)
    sink = EpisodeSink()
    diagnostics = DiagnosticsCallback(sink, output_dir=cfg.output_dir) if cfg.diagnostics else None
    if cfg.rollout == "rollout_func" or cold_start:
        from wikigym.trainers.rollout import make_rollout_func, rollout_reward
        from wikigym.trainers.trl_inputs import quiet_masked_rollouts

        quiet_masked_rollouts(lambda: True)  # its one reward is None exactly when masked
        rows = dataset_rows(spec, num_rows=cfg.num_rows, seed=cfg.seed)
        if cold_start:
            # The cold start was fine-tuned on the compact prompt, played by the rollout below.
            from wikigym.trainers.coldstart import cold_start_system_text, compact_rows

            rows = compact_rows(spec, rows, system=cold_start_system_text(model))
        rollout = make_rollout_func(
            spec, sink=sink, rows=rows, generate=generate, tools_in_prompt=not cold_start
        )
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[rollout_reward],
            args=args,
            train_dataset=Dataset.from_list(rows),
            processing_class=tokenizer,
            rollout_func=rollout,
        )
    else:
        # The one TRL recipe users call too (wikigym.trainers.trl_kwargs).
        from wikigym.trainers.trl_inputs import trl_inputs

        trainer = GRPOTrainer(
            model=model,
            args=args,
            processing_class=tokenizer,
            **trl_inputs(spec, num_rows=cfg.num_rows, seed=cfg.seed, sink=sink),
        )
    if diagnostics is not None:
        # First in line: the printer and TensorBoard callbacks then see the diag/ metrics.
        trainer.callback_handler.callbacks.insert(0, diagnostics)
    from wikigym.trainers.progress import GRPO_LOG_KEYS, use_step_progress

    use_step_progress(trainer, progress.steps("GRPO", GRPO_LOG_KEYS))
    return trainer, diagnostics


def train(cfg: TrainConfig, *, generate: Any = None) -> dict[str, Any]:
    """Run GRPO; returns the diagnostics summary (also in ``OUTPUT_DIR``). ``generate``: see
    :func:`build_trainer`.

    Writes ``OUTPUT_DIR/train_config.json``, ``metrics.jsonl`` (one object per logging step),
    ``diagnostics_summary.json`` and the final model.
    The directory appears only when the run is complete (written as a hidden sibling, renamed
    at the end); a failed run leaves nothing.

    Raises:
        OutputExistsError: ``OUTPUT_DIR`` exists and ``cfg.overwrite`` is false.
        ConfigError: A setting is unusable (checked before anything is built or written).
    """
    check_overrides(cfg.overrides)
    check_model(cfg)
    # TRL's own checks of the settings, before any output, model or world is made.
    build_grpo_config(cfg, run_preset(cfg), max_env_steps=cfg.max_env_steps)
    with atomic_output(cfg.output_dir, overwrite=cfg.overwrite) as tmp:
        (tmp / "train_config.json").write_text(
            json.dumps(asdict(cfg), indent=2, sort_keys=True, default=str) + "\n",
            encoding="utf-8",
        )
        from wikigym.trainers.progress import Progress

        progress = Progress(enabled=not cfg.quiet)
        try:
            trainer, diagnostics = build_trainer(
                replace(cfg, output_dir=str(tmp)), generate=generate, progress=progress
            )
            trainer.train()
        finally:
            progress.close()
        trainer.save_model(str(tmp / "final"))
        summary = diagnostics.summary() if diagnostics is not None else {}
    return summary
