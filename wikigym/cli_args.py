"""Command-line options made from a config dataclass: a field, its default and its help live once.

Each field of the dataclass becomes one option, named after it (``output_dir`` ->
``--output-dir``); its ``metadata`` carries ``help`` (required) and optionally ``choices``,
``min`` (lowest allowed number) and ``metavar``. Types map as follows: ``str``, ``int``,
``float``, ``Path`` take one value (``X | None`` too, default None); ``Literal[...]`` gives its
values as choices; a ``bool`` defaulting to False is a flag ``--name``, one defaulting to True
is ``--no-name``; ``dict[str, Any]`` takes a JSON object. A field without a default is a
required option.

TRL's ``HfArgumentParser`` does the same for TRL's configs, but it lives in ``transformers``
(the ``train`` extra), which the base install and ``wikigym --help`` must not need, and it
spells options with underscores and booleans as ``--flag [true|false]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, Union

T = TypeVar("T")
_SCALARS: tuple[type, ...] = (str, int, float, Path)


def option_name(f: dataclasses.Field[Any]) -> str:
    """The option of a field: ``--name`` (``--no-name`` for a bool that defaults to True)."""
    name = f.name.replace("_", "-")
    return f"--no-{name}" if f.default is True else f"--{name}"


def _unwrap_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"expected a JSON object, got {text!r} ({exc.msg})"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def bounded(kind: type, low: float | None = None) -> Callable[[str], Any]:
    """An argparse ``type`` that reads an ``int`` or ``float`` and refuses values below ``low``."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {'an integer' if kind is int else 'a number'}, got {text!r}"
            ) from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {text}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def config_fields(cls: type) -> Iterator[tuple[dataclasses.Field[Any], Any]]:
    """The fields of a dataclass with their resolved types, in declaration order."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.init:
            yield f, hints[f.name]


def add_dataclass_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type
) -> None:
    """Add one option per field of the dataclass ``cls`` (see the module docstring).

    Raises:
        TypeError: A field without ``help`` or of a type this module does not map (a bug
            of the dataclass, found when the parser is built).
    """
    for f, tp in config_fields(cls):
        meta = f.metadata
        if not meta.get("help"):
            raise TypeError(f"{cls.__name__}.{f.name} has no help metadata")
        kwargs: dict[str, Any] = {"dest": f.name, "help": meta["help"]}
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required:
            kwargs["required"] = True
        elif f.default_factory is not dataclasses.MISSING:
            kwargs["default"] = f.default_factory()
        else:
            kwargs["default"] = f.default
        base = _unwrap_optional(tp)
        if base is bool:
            kwargs["action"] = "store_false" if f.default is True else "store_true"
            if f.default is True:
                kwargs["help"] = f"{meta['help']} (on by default; this turns it off)"
        elif typing.get_origin(base) is typing.Literal:
            kwargs["choices"] = typing.get_args(base)
        elif typing.get_origin(base) is dict or base is dict:
            kwargs["type"] = _json_object
            kwargs["metavar"] = meta.get("metavar", "JSON")
        elif base in _SCALARS:
            if base in (int, float):
                kwargs["type"] = bounded(base, meta.get("min"))
            elif base is Path:
                kwargs["type"] = Path
            if "choices" in meta:
                kwargs["choices"] = tuple(meta["choices"])
            if "metavar" in meta:
                kwargs["metavar"] = meta["metavar"]
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no command-line form for type {tp!r}")
        if not required and kwargs.get("action") is None and kwargs["default"] not in (None, {}):
            kwargs["help"] = f"{meta['help']} (default: {kwargs['default']})"
        parser.add_argument(option_name(f), **kwargs)


def dataclass_from_args(cls: type[T], args: argparse.Namespace, **changes: Any) -> T:
    """The ``cls`` instance that parsed ``args`` describe (``changes`` replace fields)."""
    values = {f.name: getattr(args, f.name) for f, _ in config_fields(cls)}
    values.update(changes)
    return cls(**values)
