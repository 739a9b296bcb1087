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
import difflib
import enum
import json
import math
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, Union

from wikigym.errors import ConfigError

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


def type_name(tp: Any) -> str:
    """How a field's type reads in an error message (``float``, ``int or None``, ...)."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        members = typing.get_args(tp)
        if any(isinstance(m, type) and issubclass(m, enum.Enum) for m in members):
            members = tuple(m for m in members if m is not str)  # the str names an enum value
        return " or ".join(_article(type_name(a)) for a in members)
    if origin is typing.Literal:
        return _one_of(typing.get_args(tp))
    if origin in (list, tuple, set, Sequence):
        args = typing.get_args(tp)
        item = type_name(args[0]) if args else ""
        return f"a list of {item}s" if item.isalpha() else f"a list ({item})" if item else "a list"
    if origin in (dict, Mapping) or tp is dict:
        return "a JSON object"
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _one_of([m.value for m in tp])
    return _JSON_NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def _one_of(values: Sequence[Any], shown: int = 8) -> str:
    listed = ", ".join(json.dumps(v) for v in list(values)[:shown])
    more = f", ... ({len(values) - shown} more)" if len(values) > shown else ""
    return f"one of {listed}{more}"


#: What JSON calls the scalar types (overrides are written in JSON).
_JSON_NAMES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean (true or false)",
    Path: "path (a string)",
}


def value_fits(value: Any, tp: Any) -> bool:
    """Whether a JSON-decoded ``value`` is of the annotated type ``tp``.

    Reads the annotations config dataclasses use (TRL's and wikigym's): scalars (an integer is
    a float, a bool is neither), ``None``, unions, ``Literal``, lists, dicts and enums (an enum
    or ``Enum | str`` takes the enum's values). Any other class takes its instances.
    """
    if tp is Any or tp is object:
        return True
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        members = typing.get_args(tp)
        enums = [m for m in members if isinstance(m, type) and issubclass(m, enum.Enum)]
        if enums and isinstance(value, str) and str in members:
            # ``SchedulerType | str``: the str is one of the enum's values, not any text.
            return any(value_fits(value, e) for e in enums)
        return any(value_fits(value, m) for m in members)
    if origin is typing.Literal:
        return any(value == a and type(value) is type(a) for a in typing.get_args(tp))
    if origin in (list, tuple, set, Sequence) or tp in (list, tuple):
        args = typing.get_args(tp)
        if not isinstance(value, list):
            return False
        item = args[0] if args else Any
        return all(value_fits(v, item) for v in value)
    if origin in (dict, Mapping) or tp is dict:
        return isinstance(value, dict)
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if tp is str or tp is Path:
        return isinstance(value, str)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return any(value == m.value or value == m.name for m in tp)
    return isinstance(tp, type) and isinstance(value, tp)


def check_overrides(
    overrides: Mapping[str, Any], configs: Sequence[type], *, option: str = "--overrides"
) -> None:
    """Refuse, in one line, an override that is no field of ``configs`` or of the wrong type.

    Args:
        overrides: Field name -> value, as decoded from JSON.
        configs: Dataclasses whose fields may be overridden (the first that has a name
            decides its type); a field's ``choices`` and ``min`` metadata are checked too.
        option: The option the overrides came from, for the message.

    Raises:
        ConfigError: Naming the field, the type wanted and the value given.
    """
    fields: dict[str, tuple[dataclasses.Field[Any], Any]] = {}
    for cls in configs:
        for f, tp in config_fields(cls):
            fields.setdefault(f.name, (f, tp))
    for name, value in overrides.items():
        if name not in fields:
            close = difflib.get_close_matches(name, list(fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            owners = " or ".join(c.__name__ for c in configs)
            raise ConfigError(f"{option}: unknown field {name!r} (not a field of {owners}){hint}")
        f, tp = fields[name]
        wanted = type_name(tp)
        if not value_fits(value, tp):
            raise ConfigError(
                f"{option}: {name} must be {_article(wanted)}, got {json.dumps(value)[:80]}"
            )
        choices = f.metadata.get("choices")
        if choices and value is not None and value not in choices:
            raise ConfigError(
                f"{option}: {name} must be one of {list(choices)}, got {json.dumps(value)[:80]}"
            )
        low = f.metadata.get("min")
        if low is not None and isinstance(value, int | float) and value < low:
            raise ConfigError(f"{option}: {name} must be >= {low}, got {value}")


def _article(name: str) -> str:
    if name.startswith(("a ", "an ", "one of", "None")):
        return name
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"
