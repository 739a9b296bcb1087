"""The wire codec of ``wikigym serve`` (no server: runs without the ``serve`` extra)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wikigym.integrations.serve import protocol
from wikigym.integrations.serve.protocol import ProtocolError, WireCode, observation_payload


@pytest.fixture(autouse=True, params=["orjson", "json"])
def codec(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs on both codecs: orjson when installed, and the json fallback."""
    if request.param == "json":
        monkeypatch.setattr(protocol, "orjson", None)
    elif protocol.orjson is None:
        pytest.skip("orjson is not installed")
    return str(request.param)


def test_dumps_parses_back_to_the_message() -> None:
    info = {"step": np.int64(3), "score": np.float32(0.5), "nan": float("nan"), 7: ("a", "b")}
    payload = observation_payload(
        'é\u2028 \U0001f600 "quoted"\n',
        info,
        reward=1.0,
        terminated=True,
        truncated=False,
        session_id="s00000001",
        episode_id=None,
    )
    text = protocol.dumps({"type": "observation", "data": payload})
    assert json.loads(text) == {"type": "observation", "data": payload}
    assert b"\\u" not in text and "é".encode() in text  # UTF-8 on the wire, not ASCII escapes
    big = {"n": 2**70}  # past 64 bits: written exactly
    assert json.loads(protocol.dumps(big)) == big


@pytest.mark.parametrize(
    "raw",
    [
        "NaN",
        '{"type": "step", "data": {"message": NaN}}',
        '{"type": "reset", "data": {"seed": Infinity}}',
        '{"type": "reset"',
        "",
    ],
    ids=["nan", "nan-field", "infinity", "truncated", "empty"],
)
def test_parse_message_is_strict_json(raw: str) -> None:
    with pytest.raises(ProtocolError) as err:
        protocol.parse_message(raw)
    assert err.value.code is WireCode.INVALID_JSON


def test_deep_nesting_is_a_protocol_error_not_a_crash() -> None:
    raw = '{"type": "step", "data": {"message": ' + "[" * 5000 + "]" * 5000 + "}}"
    with pytest.raises(ProtocolError) as err:
        kind, data = protocol.parse_message(raw)
        protocol.action_text(data)
    assert err.value.code in (WireCode.INVALID_JSON, WireCode.VALIDATION_ERROR)


def test_parse_message_reads_a_message() -> None:
    raw = protocol.dumps({"type": "step", "data": {"message": "<search>x</search>"}})
    assert protocol.parse_message(raw) == ("step", {"message": "<search>x</search>"})


def test_jsonable_of_every_kind() -> None:
    """The exact-type fast path and the general path give the same JSON data."""
    from collections import OrderedDict
    from enum import Enum

    class Colour(str, Enum):
        RED = "red"

    value = {
        "s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "inf": float("inf"),
        "list": [1, (2, 3)], "np": [np.int64(4), np.float64(0.25), np.bool_(True)],
        7: "int key", Colour.RED: Colour.RED, "od": OrderedDict(a=1), "obj": object,
    }  # fmt: skip
    assert protocol.jsonable(value) == {
        "s": "x", "i": 3, "b": True, "n": None, "f": 0.5, "inf": None,
        "list": [1, [2, 3]], "np": [4, 0.25, True],
        "7": "int key", str(Colour.RED): "red", "od": {"a": 1}, "obj": str(object),
    }  # fmt: skip
