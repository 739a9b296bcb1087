"""SkyRL's trainer (skyrl 0.4): a config that takes the wikigym section, a generator that
leaves masked episodes out of the loss, and the entrypoint that runs them.

skyrl 0.4's typed config refuses keys it does not declare (``Invalid fields {'wikigym'}``)
and its CLI refuses ``+`` keys; its extension point is a config subclass parsed by an
entrypoint that ``trainer.override_entrypoint=`` names. This module is that entrypoint::

    python -m skyrl.train.entrypoints.main_base \\
        trainer.override_entrypoint=wikigym.integrations.skyrl_train \\
        environment.skyrl_gym.wikigym.corpus=/data/snap \\
        environment.skyrl_gym.wikigym.tasks=/data/tasks.jsonl ...

(or ``python -m wikigym.integrations.skyrl_train ...`` with the same keys). Before Ray
starts it opens the env once (a wrong corpus or TaskSet is one line), sets
``generator.max_turns`` to the env's step budget when it is not given (SkyRL's own default,
1, would end every episode after one turn) and refuses a smaller one, and checks that every
row of ``data.train_data``/``data.val_data`` was written for that snapshot and TaskSet.

A masked episode (the env's step budget spent without an answer, or one SkyRL stopped at
its context limit) gets an all-zero ``loss_mask`` from :class:`WikigymGymGenerator`: SkyRL's
own per-sample filtering, as its overlong and zero-variance filters do, so its tokens add
nothing to the policy loss (its reward still sits in its GRPO group's mean, as with those
filters).

skyrl 0.4 declares Python >= 3.12; wikigym's CI installs it with ``--no-deps
--ignore-requires-python`` on 3.11 in its own venv (see .ci/run).
"""

# No `from __future__ import annotations`: SkyRL builds nested configs from the dataclass
# fields' runtime types, which string annotations would hide.
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from wikigym.errors import WikigymError
from wikigym.integrations.common import (
    DEFAULT_ENV_ID,
    IntegrationConfigError,
    check_row,
    make_env,
)
from wikigym.integrations.skyrl import ENV_CLASS, env_config_dict

try:
    import ray
    from skyrl.backends.skyrl_train.inference_servers.utils import resolve_policy_model_name
    from skyrl.train.config import (
        BaseConfig,
        EnvironmentConfig,
        GeneratorConfig,
        SkyRLGymConfig,
        SkyRLTrainConfig,
    )
    from skyrl.train.entrypoints.main_base import BasePPOExp
    from skyrl.train.generators.skyrl_gym_generator import SkyRLGymGenerator, TrajectoryOutput
    from skyrl.train.utils import validate_cfg
    from skyrl.train.utils.utils import initialize_ray
except ImportError as exc:  # pragma: no cover - depends on the framework
    raise ImportError(
        f"wikigym.integrations.skyrl_train needs SkyRL's trainer, skyrl 0.4 ({exc}); from a "
        "wikigym checkout: pip install -e '.[skyrl]' 'skyrl[skyrl-train]==0.4.0'"
    ) from exc


@dataclass
class WikigymEnvConfig(BaseConfig):
    """``environment.skyrl_gym.wikigym``: the env every trajectory plays."""

    env_id: str = DEFAULT_ENV_ID
    """``WikiSearch-v1`` or ``Calc-v0``."""
    corpus: str | None = None
    """Snapshot directory (None: the embedded default world)."""
    tasks: str | None = None
    """TaskSet file (None: the corpus's default tasks)."""
    max_steps: int | None = None
    """The env's step budget (None: the env's default); ``generator.max_turns`` follows it."""
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    """Other arguments of the env (``python``, ``reward``, ``tool_format``, ...)."""


@dataclass
class WikigymSkyRLGymConfig(SkyRLGymConfig):
    wikigym: WikigymEnvConfig = field(default_factory=WikigymEnvConfig)


@dataclass
class WikigymEnvironmentConfig(EnvironmentConfig):
    env_class: str = ENV_CLASS
    skyrl_gym: WikigymSkyRLGymConfig = field(default_factory=WikigymSkyRLGymConfig)


@dataclass
class WikigymGeneratorConfig(GeneratorConfig):
    max_turns: int = 0
    """Most turns per trajectory; 0: the env's step budget (set by :func:`prepare`)."""


@dataclass
class WikigymSkyRLConfig(SkyRLTrainConfig):
    """SkyRL's root config with the ``environment.skyrl_gym.wikigym`` section."""

    generator: WikigymGeneratorConfig = field(default_factory=WikigymGeneratorConfig)
    environment: WikigymEnvironmentConfig = field(default_factory=WikigymEnvironmentConfig)


class WikigymGymGenerator(SkyRLGymGenerator):
    """SkyRL's gym generator; a masked wikigym episode's ``loss_mask`` is all zeros."""

    def _post_process_agent_loop_output(
        self, agent_loop_output: Any, env_extras: dict[str, Any], trajectory_id: Any
    ) -> Any:
        out = super()._post_process_agent_loop_output(agent_loop_output, env_extras, trajectory_id)
        steps = [out] if isinstance(out, TrajectoryOutput) else list(out.step_outputs)
        # The env's metrics come with the step that ended the episode (step-wise: the last).
        if any((s.env_metrics or {}).get("masked") for s in steps):
            for step in steps:
                step.loss_mask = [0] * len(step.loss_mask)
        return out


class WikigymPPOExp(BasePPOExp):
    """SkyRL's PPO experiment with :class:`WikigymGymGenerator`."""

    def get_generator(self, cfg: Any, tokenizer: Any, inference_engine_client: Any) -> Any:
        if cfg.generator.vision_language_generator:
            return super().get_generator(cfg, tokenizer, inference_engine_client)
        return WikigymGymGenerator(
            generator_cfg=cfg.generator,
            skyrl_gym_cfg=cfg.environment.skyrl_gym,
            inference_engine_client=inference_engine_client,
            tokenizer=tokenizer,
            policy_model_name=resolve_policy_model_name(cfg),
        )


def _data_rows(files: Sequence[str]) -> list[dict[str, Any]]:
    """The ``extra_info`` of every row of the local Parquet/JSON-lines files among ``files``
    (a Hugging Face dataset name is not checked)."""
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    infos: list[dict[str, Any]] = []
    for name in files:
        path = Path(name).expanduser()
        if not path.is_file():
            continue
        if path.suffix == ".parquet":
            if "extra_info" not in pq.read_schema(path).names:
                continue
            table = pq.read_table(path, columns=["extra_info"])
        else:
            table = pj.read_json(path)
        if "extra_info" in table.column_names:
            infos += [dict(x or {}) for x in table.column("extra_info").to_pylist()]
    return infos


def prepare(cfg: "WikigymSkyRLConfig") -> gym.Env:
    """Check ``cfg`` against the env it names and fill in ``generator.max_turns``.

    Returns:
        The env, opened once (close it when done).

    Raises:
        IntegrationConfigError: ``generator.max_turns`` below the env's step budget,
            ``generator.batched`` (single-turn only), or a data row written for another
            snapshot or TaskSet.
        WikigymError: The corpus or TaskSet cannot be opened.
    """
    if cfg.generator.batched:
        raise IntegrationConfigError(
            "generator.batched=true plays one turn per prompt; wikigym episodes are multi-turn: "
            "set generator.batched=false"
        )
    env = make_env(**_env_args(cfg))
    try:
        budget = int(getattr(env.unwrapped, "max_steps", 1))
        turns = cfg.generator.max_turns
        if turns == 0:
            cfg.generator.max_turns = budget
        elif turns < budget:
            raise IntegrationConfigError(
                f"generator.max_turns={turns} is below the env's step budget max_steps={budget}: "
                f"SkyRL would cut episodes the env has not ended; set generator.max_turns={budget}, "
                "leave it unset, or lower environment.skyrl_gym.wikigym.max_steps"
            )
        if cfg.environment.env_class == ENV_CLASS:
            for info in _data_rows([*cfg.data.train_data, *(cfg.data.val_data or [])]):
                check_row(env, info)
    except BaseException:
        env.close()
        raise
    return env


def _env_args(cfg: WikigymSkyRLConfig) -> dict[str, Any]:
    section = cfg.environment.skyrl_gym.wikigym
    return {"env_id": section.env_id, **env_config_dict(section)}


@ray.remote(num_cpus=1)
def skyrl_entrypoint(cfg: WikigymSkyRLConfig) -> None:
    """SkyRL's training task (off the head node), with the wikigym experiment; importing
    this module in the worker registers the env there."""
    WikigymPPOExp(cfg).run()


def parse(argv: Sequence[str]) -> WikigymSkyRLConfig:
    """The config of SkyRL's ``key.path=value`` arguments (``trainer.override_entrypoint``,
    which SkyRL's own entrypoint reads, is dropped)."""
    args = [a for a in argv if not a.startswith("trainer.override_entrypoint=")]
    return WikigymSkyRLConfig.from_cli_overrides(args)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse, check, then train on Ray as SkyRL's ``main_base`` does. A config mistake is
    one line on stderr and exit status 2 (SkyRL's ``main_base`` ignores a return value)."""
    try:
        cfg = parse(sys.argv[1:] if argv is None else argv)
        prepare(cfg).close()
        validate_cfg(cfg)
    except (WikigymError, ValueError) as exc:  # SkyRL's config errors are ValueErrors
        print(f"wikigym skyrl: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    initialize_ray(cfg)
    ray.get(skyrl_entrypoint.remote(cfg))


__all__ = [
    "WikigymEnvConfig",
    "WikigymGymGenerator",
    "WikigymPPOExp",
    "WikigymSkyRLConfig",
    "main",
    "parse",
    "prepare",
]

if __name__ == "__main__":
    main()
