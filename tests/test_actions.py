"""Tests of the action parser (wikigym.envs.actions) and the tool registry (wikigym.tools)."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from wikigym.codes import ACTION_ERROR_CODES, ErrorCode
from wikigym.envs.actions import (
    MAX_ACTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RAW_CHARS,
    ActionError,
    ParsedAction,
    ToolCall,
    parse_action,
)
from wikigym.tools import (
    describe_tools,
    example_call,
    get_tool,
    openai_tools_schema,
    tool_names,
)
from wikigym.tools.answer import AnswerArgs
from wikigym.tools.find import FindArgs
from wikigym.tools.open import OpenArgs
from wikigym.tools.python import PythonArgs
from wikigym.tools.search import SearchArgs

MESSAGE_BOUND = MAX_MESSAGE_CHARS + 50  # the clip marker adds a few characters


def call(text: str | bytes, **kwargs: object) -> ToolCall:
    """The single call of an action that must parse cleanly."""
    parsed = parse_action(text, **kwargs)  # type: ignore[arg-type]
    assert parsed.errors == (), parsed.errors
    assert len(parsed.calls) == 1, parsed
    return parsed.calls[0]


def error(text: str | bytes, **kwargs: object) -> ActionError:
    """The single error of an action that must fail."""
    parsed = parse_action(text, **kwargs)  # type: ignore[arg-type]
    assert parsed.calls == (), parsed.calls
    assert len(parsed.errors) == 1, parsed.errors
    return parsed.errors[0]


def tool_call(name: str, arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def assert_well_formed(parsed: ParsedAction) -> None:
    """The invariants every result keeps."""
    assert isinstance(parsed, ParsedAction)
    assert parsed.calls or parsed.errors
    for item in parsed.calls:
        assert isinstance(item.args, get_tool(item.name).args)
    for item in parsed.errors:
        assert item.code in ACTION_ERROR_CODES
        assert item.message
        assert len(item.message) <= MESSAGE_BOUND
        assert len(item.raw) <= MAX_RAW_CHARS + 50


# --- accepted forms -------------------------------------------------------------------------


def test_hermes_tool_call_with_object_arguments() -> None:
    raw = tool_call("search", {"query": "capital of France", "k": 3})
    got = call(raw)
    assert got.name == "search"
    assert got.args == SearchArgs(query="capital of France", k=3)
    assert got.raw == raw


def test_hermes_tool_call_with_json_string_arguments() -> None:
    got = call(tool_call("open", json.dumps({"page": "Paris", "section": "History"})))
    assert got.args == OpenArgs(page="Paris", section="History")


def test_hermes_tool_call_fenced_inside_tags() -> None:
    got = call(
        '<tool_call>\n```json\n{"name": "find", "arguments": {"page": 4, "text": "x"}}\n```\n</tool_call>'
    )
    assert got.args == FindArgs(page=4, text="x")


def test_bare_json_call_and_trailing_text() -> None:
    got = parse_action('  {"name": "python", "arguments": {"code": "print(1)"}}  and then?')
    assert got.calls[0].args == PythonArgs(code="print(1)")
    assert got.errors == ()
    assert got.text == "and then?"


@pytest.mark.parametrize("lang", ["json", "", "JSON"])
def test_fenced_json_call_in_free_text(lang: str) -> None:
    got = parse_action(
        f'Let me look.\n```{lang}\n{{"name": "search", "arguments": {{"query": "x"}}}}\n```\nDone.'
    )
    assert [c.name for c in got.calls] == ["search"]
    assert got.text == "Let me look.\n\nDone."


def test_fenced_code_that_is_not_a_call_is_free_text() -> None:
    action = "```python\nprint(1)\n```\n<search>x</search>"
    got = parse_action(action)
    assert got.calls[0].args == SearchArgs(query="x")
    assert got.text == "```python\nprint(1)\n```"


def test_tags_inside_a_fence_are_read() -> None:
    action = "Call:\n```\n<tool_call>" + json.dumps({"name": "search", "arguments": {"query": "x"}})
    action += "</tool_call>\n```\nafter ```json\n" + json.dumps(
        {"name": "open", "arguments": {"page": 1}}
    )
    action += "\n```"
    got = parse_action(action, max_calls=2)
    assert [c.name for c in got.calls] == ["search", "open"]
    assert got.text == "Call:\n\n\nafter"


def test_tags_after_a_bare_json_call_are_read() -> None:
    action = (
        json.dumps({"name": "search", "arguments": {"query": "x"}}) + " then <answer>y</answer>"
    )
    got = parse_action(action, max_calls=2)
    assert [c.name for c in got.calls] == ["search", "answer"]
    assert got.text == "then"


def test_openai_function_shape() -> None:
    obj = {
        "type": "function",
        "id": "c1",
        "function": {
            "name": "answer",
            "arguments": json.dumps({"text": "Paris", "citations": ["p1", "p2"]}),
        },
    }
    got = call(json.dumps(obj))
    assert got.args == AnswerArgs(text="Paris", citations=["p1", "p2"])


@pytest.mark.parametrize(
    "obj",
    [
        {"tool": "search", "args": {"query": "x"}},
        {"name": "search", "parameters": {"query": "x"}},
        {"name": "search", "query": "x"},  # flat form
        {"name": " Search ", "arguments": {"query": "x"}},  # name case and spaces
    ],
)
def test_envelope_variants(obj: dict[str, object]) -> None:
    assert call("<tool_call>" + json.dumps(obj) + "</tool_call>").args == SearchArgs(query="x")


def test_search_r1_tags() -> None:
    assert call("<search>  capital of France </search>").args == SearchArgs(
        query="capital of France"
    )
    assert call("I know it. <answer>Paris</answer>").args == AnswerArgs(text="Paris")
    assert call("<python>\n    x = 2\n    print(x)\n</python>").args == PythonArgs(
        code="x = 2\nprint(x)"
    )


def test_free_text_around_calls_is_kept() -> None:
    got = parse_action(
        "First I think.\n<tool_call>"
        + json.dumps({"name": "search", "arguments": {"query": "x"}})
        + "</tool_call>\nThen wait."
    )
    assert got.text == "First I think.\n\nThen wait."


def test_think_block_is_never_a_call() -> None:
    got = parse_action("<think>maybe <search>wrong</search></think>\n<search>right</search>")
    assert [c.args for c in got.calls] == [SearchArgs(query="right")]
    assert "wrong" in got.text
    assert error("<think>only thinking <answer>x</answer>").code == ErrorCode.NO_TOOL_CALL


def test_unclosed_tags_take_the_rest_of_the_action() -> None:
    # Generation stopped on the closing tag and dropped it.
    assert call('<tool_call>{"name": "search", "arguments": {"query": "x"}}').args == SearchArgs(
        query="x"
    )
    assert call("<search>who wrote it").args == SearchArgs(query="who wrote it")
    bad = error('<tool_call>{"name": "search", "arguments": {"query": "x"')
    assert bad.code == ErrorCode.PARSE_ERROR
    assert "not closed" in bad.message


def test_lenient_json_fallback() -> None:
    got = call(
        "<tool_call>{'name': 'search', 'arguments': {'query': 'it\\'s \"x\"', 'k': 2,},}</tool_call>"
    )
    assert got.args == SearchArgs(query='it\'s "x"', k=2)
    got = call(
        '<tool_call>{"name": "open", "arguments": {"page": "A, B", "section": None,}}</tool_call>'
    )
    assert got.args == OpenArgs(page="A, B")


# --- several calls ------------------------------------------------------------------------------


def test_calls_beyond_max_calls_are_one_too_many_calls_error() -> None:
    got = parse_action("<search>a</search> <search>b</search> <search>c</search>")
    assert [c.args.query for c in got.calls] == ["a"]  # type: ignore[attr-defined]
    assert [e.code for e in got.errors] == [ErrorCode.TOO_MANY_CALLS]
    assert "2 call(s)" in got.errors[0].message
    assert got.errors[0].raw == "<search>b</search>"


def test_calls_run_in_order_of_appearance_across_forms() -> None:
    action = "<search>a</search>" + tool_call("open", {"page": "A"}) + "<search>c</search>"
    got = parse_action(action, max_calls=3)
    assert [c.name for c in got.calls] == ["search", "open", "search"]
    assert got.errors == ()


def test_invalid_attempts_take_a_slot() -> None:
    got = parse_action(tool_call("search", {"k": 3}) + "<search>b</search>")
    assert got.calls == ()
    assert [e.code for e in got.errors] == [ErrorCode.INVALID_ARGUMENTS, ErrorCode.TOO_MANY_CALLS]
    got = parse_action(tool_call("search", {"k": 3}) + "<search>b</search>", max_calls=2)
    assert [e.code for e in got.errors] == [ErrorCode.INVALID_ARGUMENTS]
    assert [c.args for c in got.calls] == [SearchArgs(query="b")]


def test_answer_ends_the_action() -> None:
    got = parse_action(
        "<answer>Paris</answer><search>x</search>" + tool_call("bogus", {}), max_calls=1
    )
    assert [c.name for c in got.calls] == ["answer"]
    assert got.errors == ()
    got = parse_action("<search>x</search><answer>Paris</answer><search>y</search>", max_calls=5)
    assert [c.name for c in got.calls] == ["search", "answer"]
    # An answer past the slots is not run, like any other call.
    got = parse_action("<search>x</search><answer>Paris</answer>")
    assert [c.name for c in got.calls] == ["search"]
    assert [e.code for e in got.errors] == [ErrorCode.TOO_MANY_CALLS]
    # An invalid answer does not end the action.
    got = parse_action("<answer> </answer><search>x</search>", max_calls=2)
    assert [e.code for e in got.errors] == [ErrorCode.INVALID_ARGUMENTS]
    assert [c.name for c in got.calls] == ["search"]


# --- error codes ------------------------------------------------------------------------------


def test_empty_action() -> None:
    for action in ("", "   \n\t", b""):
        got = error(action)
        assert got.code == ErrorCode.EMPTY_ACTION
        assert "<tool_call>" in got.message


def test_no_tool_call() -> None:
    got = parse_action("The answer is Paris.")
    assert [e.code for e in got.errors] == [ErrorCode.NO_TOOL_CALL]
    assert got.text == "The answer is Paris."
    assert '"name": "answer"' in got.errors[0].message


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"query": "x", "k": "five"}, "k: Input should be a valid integer (got 'five')"),
        ({"query": "x", "k": True}, "k: Input should be a valid integer"),
        ({"query": "x", "k": 5.0}, "k: Input should be a valid integer"),
        ({"query": "x", "k": 21}, "k: Input should be less than or equal to 20"),
        ({"query": "x", "k": 0}, "k: Input should be greater than or equal to 1"),
        ({}, "query: Field required"),
        ({"query": "   "}, "query: String should have at least 1 character"),
        ({"query": "x" * 1001}, "at most 1000 characters"),
        ({"query": "x", "limit": 3}, "limit: Extra inputs are not permitted"),
        ({"query": 42}, "query: Input should be a valid string"),
    ],
)
def test_invalid_search_arguments(arguments: dict[str, object], needle: str) -> None:
    got = error(tool_call("search", arguments))
    assert got.code == ErrorCode.INVALID_ARGUMENTS
    assert needle in got.message
    assert "Expected search(query: string, k: integer = 5)" in got.message
    assert example_call("search") in got.message


@pytest.mark.parametrize(
    ("name", "arguments", "needle"),
    [
        ("open", {"page": True}, "page must be a page title (string) or a doc id (integer)"),
        ("open", {"page": -1}, "a doc id must be >= 0"),
        ("open", {"page": ""}, "page title must not be empty"),
        ("open", {"page": "A", "part": 0}, "part: Input should be greater than or equal to 1"),
        ("find", {"page": "A"}, "text: Field required"),
        ("python", {"code": "x" * 20_001}, "at most 20000 characters"),
        ("python", {"code": "  \n "}, "code must not be blank"),
        ("answer", {"text": "x", "citations": "p1"}, "citations: Input should be a valid list"),
        ("answer", {"text": "x", "citations": [f"p{i}" for i in range(21)]}, "at most 20 items"),
        ("answer", {"text": "x", "citations": [3]}, "citations.0: Input should be a valid string"),
    ],
)
def test_invalid_arguments_of_other_tools(
    name: str, arguments: dict[str, object], needle: str
) -> None:
    got = error(tool_call(name, arguments))
    assert got.code == ErrorCode.INVALID_ARGUMENTS
    assert needle in got.message


def test_search_r1_tag_error_shows_a_tag_example() -> None:
    got = error("<search></search>")
    assert got.code == ErrorCode.INVALID_ARGUMENTS
    assert "<search>capital of France</search>" in got.message


@pytest.mark.parametrize("name", ["browse", "", "functions.search", 3, None, ["search"]])
def test_unknown_tool(name: object) -> None:
    got = error("<tool_call>" + json.dumps({"name": name, "arguments": {}}) + "</tool_call>")
    assert got.code == ErrorCode.UNKNOWN_TOOL
    assert "Available tools: search, open, find, python, answer" in got.message


def test_disabled_tool_is_unknown() -> None:
    enabled = ["answer", "search"]
    got = error("<python>print(1)</python>", tools=enabled)
    assert got.code == ErrorCode.UNKNOWN_TOOL
    assert "Available tools: search, answer." in got.message
    assert call("<search>x</search>", tools=enabled).name == "search"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("not json at all", "invalid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"arguments": {"query": "x"}}', "expected exactly one 'name' key"),
        ('{"name": "search", "tool": "search"}', "expected exactly one 'name' key"),
        ('{"name": "search", "arguments": {}, "args": {}}', "both 'arguments' and 'args' given"),
        (
            '{"name": "search", "arguments": {"query": "x"}, "k": 3}',
            "unexpected keys ['k'] beside 'arguments'",
        ),
        ('{"name": "search", "arguments": "{not json"}', "the arguments string is not JSON"),
        ('{"name": "search", "arguments": [1]}', "'arguments' must be a JSON object, got list"),
        (
            '{"name": "search", "arguments": {"query": "x", "k": NaN}}',
            "NaN is not a valid JSON number",
        ),
        (
            '{"name": "search", "arguments": {"query": "x", "k": -Infinity}}',
            "-Infinity is not a valid JSON number",
        ),
        (
            '{"name": "search", "arguments": {"query": "x", "k": ' + "9" * 5000 + "}}",
            "invalid JSON",
        ),
        ('{"name": "search", "arguments": {"query": "x"}} {"name": "open"}', "Extra data"),
    ],
)
def test_parse_errors(body: str, needle: str) -> None:
    got = error("<tool_call>" + body + "</tool_call>")
    assert got.code == ErrorCode.PARSE_ERROR
    assert needle in got.message
    assert example_call("search") in got.message


def test_empty_or_null_arguments_mean_no_arguments() -> None:
    for arguments in ("", None, "  "):
        got = error(tool_call("search", arguments))
        assert got.code == ErrorCode.INVALID_ARGUMENTS
        assert "query: Field required" in got.message


def test_action_too_long() -> None:
    got = error("<search>x</search>" + " " * MAX_ACTION_CHARS)
    assert got.code == ErrorCode.ACTION_TOO_LONG
    assert len(got.raw) <= MAX_RAW_CHARS


# --- hostile inputs -------------------------------------------------------------------------


def test_random_bytes() -> None:
    rng = random.Random(0)
    for size in (1, 10, 1000, 100_000):
        assert_well_formed(parse_action(rng.randbytes(size)))


def test_bytes_are_decoded_with_replacement() -> None:
    got = parse_action(b"\xff<search>caf\xc3\xa9 \xfe</search>")
    assert got.calls[0].args == SearchArgs(query="café \ufffd")
    assert got.text == "\ufffd"


def _timed(action: str | bytes) -> tuple[ParsedAction, float]:
    start = time.perf_counter()
    parsed = parse_action(action)
    return parsed, time.perf_counter() - start


MIB = 1 << 20


@pytest.mark.parametrize(
    "action",
    [
        "a" * MIB,
        "<" * MIB,
        "<search>" * (MIB // 8),
        "<tool_call>" * (MIB // 11),
        "```" * (MIB // 3),
        "```json\n{" * (MIB // 9),
        '{"name": ' + '"\\"' * (MIB // 3),
        "<tool_call>"
        + '"\\"' * 60_000
        + "</tool_call>",  # unterminated strings, within the call cap
        "<tool_call>" + "[]," * 60_000 + "</tool_call>",  # wide, shallow JSON
        "<tool_call>{'a': " + "'x', " * 3_900 + "}</tool_call>",  # the lenient retry, at its cap
        "<tool_call>{'a': " + "'x', " * 35_000 + "}</tool_call>",  # past the lenient cap
        "<tool_call>" + '"\\"' * 6_000 + "</tool_call>",  # unterminated strings, lenient retry
        '{"name": "search", "arguments": {"query": "' + "x" * MIB + '"}}',
        "<search>" + "x" * MIB + "</search>",
        "<python>" + " \n" * (MIB // 2) + "</python>",
        "```\n" + "<search>x</search>" * (MIB // 18),
        '{"name": ' + " " * MIB,
        "\ud800" * MIB,
        "\x00" * MIB,
    ],
    ids=lambda a: repr(a[:20]) + f"..({len(a)})",
)
def test_one_mib_inputs_parse_quickly(action: str) -> None:
    parsed, seconds = _timed(action)
    assert_well_formed(parsed)
    assert seconds < 0.8, seconds  # ~0.2 s at most on an idle 2-core machine


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deep_json(depth: int) -> None:
    for action in (
        "<tool_call>" + "[" * depth + "]" * depth + "</tool_call>",
        '{"name": "search", "arguments": ' + '{"a": ' * depth + "1" + "}" * depth + "}",
        tool_call("search", {"query": "x"}).replace('"x"', "[" * depth + "]" * depth),
    ):
        parsed, seconds = _timed(action)
        assert [e.code for e in parsed.errors] == [ErrorCode.PARSE_ERROR]
        assert seconds < 0.5
    got = error("<tool_call>" + "[" * depth + "]" * depth + "</tool_call>")
    assert "nested more than 32 levels" in got.message


def test_deep_brackets_in_text_after_a_bare_call_are_not_json() -> None:
    action = json.dumps({"name": "search", "arguments": {"query": "x"}}) + " " + "[" * 100
    got = parse_action(action)
    assert got.calls[0].args == SearchArgs(query="x")
    assert got.text == "[" * 100


def test_lenient_retry_rechecks_depth() -> None:
    # The lone '"' hides the brackets from the first check; the rewrite exposes them.
    action = "<tool_call>{'a': 'x\"', 'b': " + "[" * 5000 + "]" * 5000 + "}</tool_call>"
    got = error(action)
    assert got.code == ErrorCode.PARSE_ERROR
    assert "nested more than 32 levels" in got.message


def test_nesting_within_the_limit_reaches_validation() -> None:
    got = error(tool_call("search", {"query": [[[["x"]]]]}))
    assert got.code == ErrorCode.INVALID_ARGUMENTS


def test_lone_surrogates_and_null_bytes_are_replaced() -> None:
    got = call("<search>a\ud800b\x00c</search>")
    assert got.args == SearchArgs(query="a\ufffdb\ufffdc")
    got = call(
        '<tool_call>{"name": "search", "arguments": {"query": "a\\udc00b\\u0000"}}</tool_call>'
    )
    assert got.args == SearchArgs(query="a\ufffdb\ufffd")
    got.args.query.encode("utf-8")  # type: ignore[attr-defined]


def test_messages_do_not_echo_huge_input() -> None:
    got = error(tool_call("search", {"query": "x" * 150_000}))
    assert got.code == ErrorCode.INVALID_ARGUMENTS
    assert len(got.message) <= MESSAGE_BOUND
    got = error(tool_call("search", {"query": "x" * 500_000}))
    assert got.code == ErrorCode.PARSE_ERROR
    assert "more than 200000" in got.message
    assert len(got.message) <= MESSAGE_BOUND
    assert len(got.raw) <= MAX_RAW_CHARS + 50
    got = error("<tool_call>" + "y" * 500_000 + "</tool_call>")
    assert got.code == ErrorCode.PARSE_ERROR
    assert len(got.message) <= MESSAGE_BOUND


def test_programming_errors_raise() -> None:
    with pytest.raises(TypeError):
        parse_action(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_calls"):
        parse_action("<search>x</search>", max_calls=0)
    with pytest.raises(ValueError, match="tools"):
        parse_action("<search>x</search>", tools=())


_FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<search>",
    "</search>",
    "<answer>",
    "</answer>",
    "<python>",
    "</python>",
    "<think>",
    "</think>",
    "```",
    "```json\n",
    '{"name": "search", "arguments": {"query": "x"}}',
    '{"name": ',
    '"arguments": ',
    '{"query": ',
    '"k": 3',
    "{",
    "}",
    "[",
    "]",
    ",",
    "'",
    '"',
    "\\",
    "NaN",
    "None",
    "True",
    "\ud800",
    "\x00",
    " ",
    "\n",
    "search",
    "answer",
]


@settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(action: str) -> None:
    parsed = parse_action(action)
    assert_well_formed(parsed)
    assert parse_action(action) == parsed


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(action: bytes) -> None:
    assert_well_formed(parse_action(action))


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=5), max_size=30), st.integers(1, 3))
def test_fragment_soup_never_raises(parts: list[str], max_calls: int) -> None:
    action = "".join(parts)
    parsed = parse_action(action, max_calls=max_calls)
    assert_well_formed(parsed)
    run = list(parsed.calls)
    assert len(run) + sum(e.code != ErrorCode.TOO_MANY_CALLS for e in parsed.errors) <= max_calls
    assert sum(e.code == ErrorCode.TOO_MANY_CALLS for e in parsed.errors) <= 1
    answers = [i for i, c in enumerate(run) if c.name == "answer"]
    assert answers in ([], [len(run) - 1])  # nothing runs after an answer


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.sampled_from(list(tool_names())),
    st.dictionaries(
        st.sampled_from(
            ["query", "k", "page", "section", "part", "text", "code", "citations", "x"]
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=20)
        | st.lists(st.text(max_size=5), max_size=3),
        max_size=4,
    ),
)
def test_arbitrary_arguments_validate_or_fail_cleanly(
    name: str, arguments: dict[str, object]
) -> None:
    action = "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"
    parsed = parse_action(action)
    assert_well_formed(parsed)
    if parsed.calls:
        assert parsed.calls[0].name == name
    else:
        assert parsed.errors[0].code in (
            ErrorCode.INVALID_ARGUMENTS,
            ErrorCode.PARSE_ERROR,
        )  # NaN floats: parse_error


# --- tool specs -----------------------------------------------------------------------------


def test_registry_covers_every_tool() -> None:
    assert {"search", "open", "find", "python", "answer"} <= set(tool_names())
    for name in tool_names():
        tool = get_tool(name)
        assert tool.name == name and issubclass(tool.args, BaseModel)
        assert tool.args.model_validate(dict(tool.example)) is not None
        assert call(example_call(name)).name == name


def test_argument_models_are_frozen_and_forbid_extras() -> None:
    args = SearchArgs(query="x")
    with pytest.raises(ValidationError):
        args.k = 3  # type: ignore[misc]
    with pytest.raises(ValidationError, match="Extra inputs"):
        SearchArgs.model_validate({"query": "x", "extra": 1})
    assert AnswerArgs(text="a").citations == []
    assert AnswerArgs(text="a").citations is not AnswerArgs(text="b").citations


def test_openai_tools_schema_shape() -> None:
    tools = openai_tools_schema()
    assert [t["function"]["name"] for t in tools] == list(tool_names())
    required = {
        "search": ["query"],
        "open": ["page"],
        "find": ["page", "text"],
        "python": ["code"],
        "answer": ["text"],
    }
    for tool in tools:
        assert tool["type"] == "function"
        function = tool["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["description"]
        params = function["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert params["required"] == required[function["name"]]
        assert set(params["required"]) <= set(params["properties"])
        assert "title" not in params
        for prop in params["properties"].values():
            assert prop.get("description"), function["name"]


def test_openai_tools_schema_is_valid_json_schema_and_examples_validate() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for tool in openai_tools_schema():
        params = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(params)
        jsonschema.validate(dict(get_tool(tool["function"]["name"]).example), params)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"unexpected": 1}, params)


def test_openai_tools_schema_is_deterministic_and_filterable() -> None:
    first = json.dumps(openai_tools_schema(), sort_keys=True)
    assert json.dumps(openai_tools_schema(), sort_keys=True) == first
    assert json.dumps(openai_tools_schema()) == json.dumps(openai_tools_schema())
    subset = openai_tools_schema(["answer", "search", "answer"])
    assert [t["function"]["name"] for t in subset] == ["search", "answer"]
    with pytest.raises(TypeError, match="tool names"):
        openai_tools_schema([3])  # type: ignore[list-item]
    with pytest.raises(KeyError, match="unknown tool 'browse'"):
        openai_tools_schema(["browse"])


def test_describe_tools() -> None:
    text = describe_tools()
    assert text == describe_tools()
    for name in tool_names():
        assert f"- {name}(" in text
        assert example_call(name) in text
    assert "search(query: string, k: integer = 5)" in text
    assert "open(page: string | integer, section: string | null = null, part: integer = 1)" in text
    assert "<search>capital of France</search>" in text
    assert "Call one tool per turn" in text
    assert "Call at most 3 tools per turn" in describe_tools(max_calls=3)
    short = describe_tools(["search"], search_r1_tags=False)
    assert "answer" not in short
    assert "<search>" not in short
    # Every example shown to the model parses.
    for line in text.splitlines():
        if line.strip().startswith("<tool_call>"):
            assert call(line.strip()).raw == line.strip()


def test_parsing_is_deterministic() -> None:
    actions = [
        "<search>a</search><search>b</search>",
        tool_call("search", {"query": "x", "k": "five"}),
        "nothing here",
        "<tool_call>{'name': 'open', 'arguments': {'page': 3,}}</tool_call>",
    ]
    assert [parse_action(a, max_calls=2) for a in actions] == [
        parse_action(a, max_calls=2) for a in actions
    ]
