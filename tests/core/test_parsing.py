"""The one parser per shared format: examples, then hypothesis fuzzing for
totality (never raises), linear behaviour and round trips."""

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_llm.envs.parsing import (
    MAX_TOOL_CALL_DEPTH,
    MAX_TOOL_CALLS,
    extract_boxed,
    extract_code_blocks,
    last_boxed,
    last_code_block,
    parse_tool_calls,
)


# ------------------------------------------------------------------ boxed
def test_boxed_nested_braces_and_several_boxes():
    text = r"first \boxed{1} then \boxed{\frac{1}{2}} and \boxed{ {a}_{b} }"
    assert extract_boxed(text) == ["1", r"\frac{1}{2}", "{a}_{b}"]
    assert last_boxed(text) == "{a}_{b}"


def test_boxed_without_braces_fbox_and_escaped_braces():
    assert extract_boxed(r"so \boxed 5.") == ["5"]
    assert extract_boxed(r"$\boxed 42$") == ["42"]
    assert extract_boxed(r"\fbox{x+1}") == ["x+1"]
    assert extract_boxed(r"\boxed{\{1,2\}}") == [r"\{1,2\}"]


def test_boxed_unclosed_and_lookalikes_are_ignored():
    assert extract_boxed(r"\boxed{1") == []
    assert extract_boxed(r"\boxed{2} \boxed{3") == ["2"]
    assert extract_boxed(r"\boxedx{4} \boxes{5}") == []
    assert last_boxed("no answer") is None
    assert extract_boxed(None) == []  # type: ignore[arg-type]


@given(st.text(max_size=300))
def test_boxed_total(text):
    out = extract_boxed(text)
    assert all(isinstance(b, str) for b in out)


@given(st.text(alphabet=st.characters(blacklist_characters="{}\\"), max_size=40), st.text(max_size=50), st.text(max_size=50))
def test_boxed_roundtrip(content, before, after):
    # Whatever surrounds it, the last box of `before + box + <text without boxes>` is found.
    after = after.replace("\\", "")
    content = content.strip()
    text = before + r"\boxed{" + content + "}" + after
    assert last_boxed(text) == content


@settings(deadline=2000, max_examples=5)
@given(st.integers(min_value=1, max_value=3))
def test_boxed_linear_on_huge_input(k):
    text = ("{" * 50_000 + r"\boxed{") * k + "x" * 100_000
    assert extract_boxed(text) == []


# ------------------------------------------------------------- code blocks
def test_code_blocks_language_tags_and_several_blocks():
    text = "intro\n```python\nprint(1)\n```\nmid\n```cpp\nint main(){}\n```\n```\nplain\n```"
    blocks = extract_code_blocks(text)
    assert [(b.language, b.code, b.closed) for b in blocks] == [
        ("python", "print(1)", True), ("cpp", "int main(){}", True), ("", "plain", True),
    ]
    assert last_code_block(text, ("python",)).code == "plain"  # untagged matches any language
    assert last_code_block("```cpp\nx\n```", ("python",)) is None


def test_code_block_unclosed_runs_to_end_and_longer_fences():
    blocks = extract_code_blocks("```py\nx = 1\ny = 2")
    assert blocks[0].code == "x = 1\ny = 2" and not blocks[0].closed
    text = "````markdown\n```python\ninner\n```\n````"
    assert extract_code_blocks(text)[0].code == "```python\ninner\n```"
    assert extract_code_blocks("~~~python\nz\n~~~")[0].code == "z"


@given(st.text(max_size=300))
def test_code_blocks_total(text):
    for b in extract_code_blocks(text):
        assert isinstance(b.code, str) and isinstance(b.language, str)


@given(st.text(alphabet=st.characters(blacklist_characters="`~"), max_size=200))
def test_code_block_roundtrip(code):
    text = "Here:\n```python\n" + code + "\n```\nDone."
    if "\n" not in code or all(not line.strip().startswith(("```", "~~~")) for line in code.split("\n")):
        assert last_code_block(text).code == code


# --------------------------------------------------------------- tool calls
def test_hermes_and_openai_forms_parse_to_the_same_calls():
    args = {"city": "Paris", "days": 3}
    hermes = f'<tool_call>{{"name": "weather", "arguments": {json.dumps(args)}}}</tool_call>'
    openai = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "weather", "arguments": json.dumps(args)}}]}
    a, b = parse_tool_calls(hermes), parse_tool_calls(openai)
    assert a.calls == b.calls and not a.errors and not b.errors
    assert a.calls[0].arguments == args


def test_several_calls_ids_and_unclosed_last():
    text = ('<tool_call>{"name": "a", "arguments": {}}</tool_call>'
            '<tool_call>{"name": "b", "arguments": {"x": 1}}')
    p = parse_tool_calls(text)
    assert [(c.name, c.id) for c in p.calls] == [("a", "call_0"), ("b", "call_1")]


def test_malformed_calls_are_reported_not_dropped():
    p = parse_tool_calls('<tool_call>{"name": "a", "arguments": {</tool_call><tool_call>[1]</tool_call>'
                         '<tool_call>{"arguments": {}}</tool_call>')
    assert p.calls == [] and len(p.errors) == 3
    assert "invalid JSON" in p.errors[0] and "not a JSON object" in p.errors[1] and "no 'name'" in p.errors[2]
    bad = {"tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}, "junk", {"function": {"name": "g", "arguments": "[1]"}}]}
    p = parse_tool_calls(bad)
    assert p.calls == [] and len(p.errors) == 3
    assert parse_tool_calls({"tool_calls": "nope"}).errors == ["'tool_calls' must be a list"]


def _nested_json(kind: str, depth: int) -> str:
    """A JSON value nesting ``depth`` levels of objects or arrays."""
    return '{"a": ' * depth + "1" + "}" * depth if kind == "object" else "[" * depth + "]" * depth


def _nested(kind: str, depth: int) -> object:
    """:func:`_nested_json` as a Python value (built without the JSON parser's limit)."""
    value: object = 1 if kind == "object" else []
    for _ in range(depth - 1 if kind == "array" else depth):
        value = {"a": value} if kind == "object" else [value]
    return value


@pytest.mark.parametrize("kind", ["object", "array"])
def test_arguments_nest_at_most_the_bound_in_every_form(kind):
    """Deeper arguments made jsonschema's error message (and copies, comparisons)
    raise RecursionError downstream (issue 37, item 6): a malformed call instead."""
    for depth, ok in [(MAX_TOOL_CALL_DEPTH - 1, True), (MAX_TOOL_CALL_DEPTH, False), (900, False), (985, False)]:
        arguments = f'{{"q": {_nested_json(kind, depth)}}}'  # the arguments object is one level more
        for message in (f'<tool_call>{{"name": "f", "arguments": {arguments}}}</tool_call>',
                        {"tool_calls": [{"function": {"name": "f", "arguments": arguments}}]},
                        {"tool_calls": [{"function": {"name": "f", "arguments": {"q": _nested(kind, depth)}}}]}):
            p = parse_tool_calls(message)
            assert (len(p.calls), len(p.errors)) == ((1, 0) if ok else (0, 1)), (depth, p.errors)
            if not ok:  # or, past what the JSON parser reads under this stack, not JSON
                assert (f"nested too deeply (over {MAX_TOOL_CALL_DEPTH} levels)" in p.errors[0]
                        or "maximum recursion depth" in p.errors[0] and depth == 985), p.errors


def test_calls_past_the_count_bound_are_counted_not_read():
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    assert parse_tool_calls(call * MAX_TOOL_CALLS).errors == []
    p = parse_tool_calls(call * (MAX_TOOL_CALLS + 5) + "<tool_call>{unclosed <tool_call>")
    assert len(p.calls) == MAX_TOOL_CALLS
    assert p.errors == [f"6 more tool calls not read: at most {MAX_TOOL_CALLS} in one turn"]
    # both formats share the bound, OpenAI entries first
    both = {"tool_calls": [{"function": {"name": "g", "arguments": "{}"}}] * (MAX_TOOL_CALLS - 1), "content": call * 3}
    p = parse_tool_calls(both)
    assert [c.name for c in p.calls].count("f") == 1 and p.errors == [f"2 more tool calls not read: at most {MAX_TOOL_CALLS} in one turn"]


def test_ten_thousand_calls_parse_in_bounded_time():
    text = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>' * 10_000
    start = time.perf_counter()
    p = parse_tool_calls(text)
    assert time.perf_counter() - start < 0.5 and len(p.calls) == MAX_TOOL_CALLS


def test_an_integer_too_long_to_convert_is_a_malformed_call_not_an_exception():
    huge = "9" * 5000  # json.loads raises a plain ValueError past 4300 digits
    p = parse_tool_calls(f'<tool_call>{{"name": "get_order", "arguments": {{"order_id": {huge}}}}}</tool_call>')
    assert p.calls == [] and "invalid JSON" in p.errors[0]
    p = parse_tool_calls({"tool_calls": [{"function": {"name": "f", "arguments": f'{{"n": {huge}}}'}}]})
    assert p.calls == [] and "arguments are not valid JSON" in p.errors[0]


def test_plain_text_has_no_calls():
    assert parse_tool_calls("hello").calls == [] and parse_tool_calls("hello").errors == []
    assert parse_tool_calls(b"\x00\xff").calls == []  # type: ignore[arg-type]


@given(st.one_of(st.text(max_size=300), st.binary(max_size=50), st.none(), st.integers(),
                 st.dictionaries(st.text(max_size=10), st.text(max_size=30), max_size=4)))
def test_tool_call_parser_total(message):
    p = parse_tool_calls(message)
    assert isinstance(p.calls, list) and isinstance(p.errors, list)


@given(st.text(max_size=30).filter(bool),
       st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=10), st.booleans()), max_size=4))
def test_tool_call_roundtrip(name, args):
    call = {"name": name, "arguments": args}
    text = "thinking...<tool_call>" + json.dumps(call) + "</tool_call>"
    p = parse_tool_calls(text)
    if "</tool_call>" not in json.dumps(call):
        assert p.calls[0].name == name and p.calls[0].arguments == args
        assert parse_tool_calls({"tool_calls": [p.calls[0].to_openai()]}).calls[0].arguments == args
