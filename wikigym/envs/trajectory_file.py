"""Trajectory files as untrusted data: a bounded reader, a strict schema, an env allow-list.

A trajectory file may come from anywhere, so reading one never runs code, imports a module
or unlocks an unsafe mode:

- the file is read in bounded pieces (:data:`MAX_FILE_BYTES`, :data:`MAX_LINE_BYTES`); JSON
  that is truncated, not UTF-8, nested too deep, or holds ``NaN``/``Infinity`` is refused;
- the header and every step are validated by strict pydantic models (no unknown keys, no
  ``"5"`` for an integer, no ``true`` for a number);
- the env is named only by one of wikigym's registered WikiSearch ids (never by an entry point such as
  ``"module:Env"``, which Gymnasium would import), and its arguments must pass
  :class:`WikiSearchReplayArgs`, an allow-list of JSON values with checked types and ranges;
  ``corpus``/``tasks`` are paths of data files, opened as a snapshot and a TaskSet;
- ``python="unsafe"`` (model code run on the host without a sandbox) is refused unless the
  caller passes ``trust=True`` (``wikigym replay TRAJ --trust``);
- every limit the file sets is capped by the replayer's: a sandbox limit (``sandbox``, or the
  defaults when the file names none) above the replaying side's (:class:`SandboxLimits`'
  defaults, or what the caller passes: ``wikigym replay TRAJ --sandbox-limits JSON``) is
  refused unless ``trust=True``; the other numbers (``max_steps``, ``max_calls_per_step``,
  ``max_obs_chars``, ``search_k``) are capped by the allow-list's fixed ranges.

Every problem is a :class:`~wikigym.errors.TrajectoryError` naming the line and the field.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wikigym.envs.registration import env_version, replayable_env_ids
from wikigym.envs.rewards import PRESETS
from wikigym.errors import TrajectoryError
from wikigym.jsonl import json_lines
from wikigym.sandbox.sandbox import SandboxLimits
from wikigym.tasks.limits import MAX_K
from wikigym.tools import tool_names

FORMAT = "wikigym.trajectory/1"
MAX_LINE_BYTES = 32 * 1024 * 1024  # a 2M-character action with every character escaped fits
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_REPLAY_STEPS = 10_000
MAX_OBS_CHARS = 2_000_000
MAX_CALLS_PER_STEP = 64
MAX_SEED = 2**63 - 1

_SHA256 = r"^[0-9a-f]{64}$"
_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class WikiSearchReplayArgs(BaseModel):
    """The WikiSearch arguments a trajectory may ask for (what ``spec_kwargs`` holds). A value
    left out (or null) is the recorded id's own (:mod:`wikigym.envs.registration`)."""

    model_config = _STRICT

    corpus: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    tasks: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    max_steps: Annotated[int, Field(ge=1, le=MAX_REPLAY_STEPS)] | None = None
    reward: str | None = None
    tool_format: Literal["hermes", "json", "search-r1"] | None = None
    tools: list[str] | None = None
    max_calls_per_step: Annotated[int, Field(ge=1, le=MAX_CALLS_PER_STEP)] | None = None
    search_k: Annotated[int, Field(ge=1, le=MAX_K)] | None = None
    python: Literal["auto", "off", "unsafe"] | None = None
    max_obs_chars: Annotated[int, Field(ge=1, le=MAX_OBS_CHARS)] | None = None
    sandbox: dict[str, Any] | None = None

    @field_validator("sandbox")
    @classmethod
    def _limits(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # SandboxLimits checks every field's type and range (SandboxLimitsError is a ValueError).
        return None if value is None else SandboxLimits.from_value(value).to_dict()

    @field_validator("reward")
    @classmethod
    def _preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"must be one of the reward presets {list(PRESETS)}")
        return value

    @field_validator("tools")
    @classmethod
    def _tools(cls, value: list[str] | None) -> list[str] | None:
        names = list(tool_names())
        if value is not None and (len(value) > len(names) or not set(value) <= set(names)):
            raise ValueError(f"must be a list of tool names from {names}")
        return value

    @field_validator("corpus", "tasks")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        if value is not None and "\x00" in value:
            raise ValueError("must be a file system path (no NUL character)")
        return value


class ResetOptions(BaseModel):
    """The reset options a trajectory may carry."""

    model_config = _STRICT

    task_id: Annotated[str, Field(min_length=1, max_length=4096)] | None = None


class TrajectoryHeader(BaseModel):
    """The first line of a trajectory file."""

    model_config = _STRICT

    format: Literal["wikigym.trajectory/1"]
    env_id: str
    env_kwargs: dict[str, Any]
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    options: ResetOptions
    snapshot_id: Annotated[str, Field(pattern=_SHA256)]
    taskset_id: Annotated[str, Field(pattern=_SHA256)]
    task_id: Annotated[str, Field(min_length=1, max_length=4096)]
    observation: str
    info: dict[str, Any]


class TrajectoryStep(BaseModel):
    """One step line of a trajectory file."""

    model_config = _STRICT

    action: str
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_line(text: str, where: str) -> Any:
    """One JSON value; a :class:`TrajectoryError` for anything that is not plain JSON."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError as exc:
        raise TrajectoryError(f"{where}: JSON nested too deeply to be a trajectory line") from exc
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, integers of > 4300 digits
        reason = str(exc).split(";")[0]  # drops Python's advice on raising the digit limit
        raise TrajectoryError(f"{where}: not a JSON line ({reason})") from exc


def read_lines(path: Path) -> list[tuple[int, Any]]:
    """``(line number, JSON value)`` of each non-blank line, read within the size limits.

    Raises:
        TrajectoryError: Missing or unreadable file, too large, a line too long, bad JSON.
    """
    if not path.is_file():
        raise TrajectoryError(f"trajectory file {path} does not exist (or is not a file)")
    lines = json_lines(
        path,
        TrajectoryError,
        what="a trajectory written by wikigym",
        max_line_bytes=MAX_LINE_BYTES,
        max_file_bytes=MAX_FILE_BYTES,
        max_lines=MAX_REPLAY_STEPS + 2,  # the header, the steps, a trailing blank line
    )
    return [(number, _json_line(text, f"{path}:{number}")) for number, text in lines]


def _validated(model: type[BaseModel], value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise TrajectoryError(f"{where}: expected a JSON object, got {type(value).__name__}")
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(line)"
        raise TrajectoryError(
            f"{where}: field {field!r}: {first['msg']}; not a valid {FORMAT} line"
        ) from exc


def load_header_and_steps(path: Path) -> tuple[TrajectoryHeader, list[TrajectoryStep]]:
    """The validated header and steps of a trajectory file.

    Raises:
        TrajectoryError: The file is not a well-formed trajectory (line and field named).
    """
    lines = read_lines(path)
    if not lines:
        raise TrajectoryError(f"{path} is empty; expected a {FORMAT} header on the first line")
    number, first = lines[0]
    if not isinstance(first, dict) or first.get("format") != FORMAT:
        got = first.get("format") if isinstance(first, dict) else type(first).__name__
        raise TrajectoryError(
            f"{path}:{number}: expected a header with format {FORMAT!r}, got {str(got)[:80]!r}"
        )
    header: TrajectoryHeader = _validated(TrajectoryHeader, first, f"{path}:{number}")
    steps: list[TrajectoryStep] = [
        _validated(TrajectoryStep, value, f"{path}:{n}") for n, value in lines[1:]
    ]
    return header, steps


def replay_env_args(
    header: TrajectoryHeader,
    path: Path,
    *,
    trust: bool,
    sandbox_limits: SandboxLimits | None = None,
) -> dict[str, Any]:
    """The checked ``gym.make`` arguments of a trajectory's env.

    Args:
        header: The file's validated header.
        path: The file (named in errors).
        trust: Accept ``python="unsafe"`` and any sandbox limits the file asks for.
        sandbox_limits: The most each sandbox limit of the replay may be; None for
            :class:`SandboxLimits`' defaults. A file may ask for less, never more.

    Raises:
        TrajectoryError: An env id that wikigym does not replay, an argument outside the
            allow-list, ``python="unsafe"`` or a sandbox limit above ``sandbox_limits``
            without ``trust``.
    """
    if header.env_id not in replayable_env_ids():
        raise TrajectoryError(
            f"{path}: env_id {header.env_id[:80]!r} is not replayable; replay accepts only "
            f"wikigym's {list(replayable_env_ids())} (a file cannot name a module to import)"
        )
    accepted = sorted(WikiSearchReplayArgs.model_fields)
    unknown = sorted(set(header.env_kwargs) - set(accepted))
    if unknown:
        raise TrajectoryError(
            f"{path}: env_kwargs {unknown[0][:80]!r} is not an argument replay accepts "
            f"(accepted: {', '.join(accepted)})"
        )
    args: WikiSearchReplayArgs = _validated(
        WikiSearchReplayArgs, header.env_kwargs, f"{path}: env_kwargs"
    )
    pinned = env_version(header.env_id).kwargs
    if (args.python or pinned.get("python")) == "unsafe" and not trust:
        raise TrajectoryError(
            f"{path} asks for python='unsafe' (model code run on this host without a sandbox); "
            "refused: replay it only if you trust the file, with `wikigym replay TRAJ --trust` "
            "(replay(path, trust=True))"
        )
    if not trust and (args.python or pinned.get("python")) != "off":
        asked = args.sandbox if args.sandbox is not None else pinned.get("sandbox")
        _within_ceiling(path, SandboxLimits.from_value(asked), sandbox_limits)
    # null is the id's own value; corpus and tasks null: the embedded default (the env's).
    return args.model_dump(exclude_none=True)


def _within_ceiling(path: Path, asked: SandboxLimits, ceiling: SandboxLimits | None) -> None:
    """Refuse sandbox limits a file asks for above the replayer's (the defaults if None)."""
    most = ceiling if ceiling is not None else SandboxLimits()
    whose = "the defaults" if ceiling is None else "--sandbox-limits"
    for f in fields(SandboxLimits):
        want, cap = getattr(asked, f.name), getattr(most, f.name)
        if want > cap:
            raise TrajectoryError(
                f"{path} asks for sandbox limit {f.name}={want:g}, above this replay's "
                f"{cap:g} ({whose}); refused: raise the ceiling with `wikigym replay TRAJ "
                f"--sandbox-limits '{{\"{f.name}\": {want:g}}}'` (replay(path, "
                "sandbox_limits=...)) or, for a file you made yourself, pass --trust"
            )


__all__ = [
    "FORMAT",
    "MAX_FILE_BYTES",
    "MAX_LINE_BYTES",
    "MAX_REPLAY_STEPS",
    "ResetOptions",
    "TrajectoryHeader",
    "TrajectoryStep",
    "WikiSearchReplayArgs",
    "load_header_and_steps",
    "read_lines",
    "replay_env_args",
]
