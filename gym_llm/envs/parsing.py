"""The one parser for each format shared by all domains.

* final answers: ``\\boxed{...}`` (also ``\\fbox{...}`` and ``\\boxed 5``);
* tagged answers: ``<answer>...</answer>`` (any tag name, reasoning-gym's convention);
* code: Markdown fenced blocks (```python ... ```);
* tool calls: Hermes/Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
  text, or OpenAI ``tool_calls`` in an assistant message dict.

Every function here is total: any input (empty, huge, binary, malformed) returns
a result, never raises, and runs in time linear in the input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CodeBlock",
    "ToolCall",
    "ToolCallParse",
    "UnreadCall",
    "extract_boxed",
    "last_boxed",
    "extract_tagged",
    "boxed_spans",
    "extract_code_blocks",
    "last_code_block",
    "parse_tool_calls",
    "message_text",
    "MAX_TOOL_CALLS",
    "MAX_TOOL_CALL_DEPTH",
    "refused_arguments",
]

# ---------------------------------------------------------------------------
# \boxed{...}

_BOX_RE = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")


def extract_boxed(text: str) -> list[str]:
    """Return the contents of every ``\\boxed``/``\\fbox`` in ``text``, in order.

    Braces nest (``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``); an unclosed
    box is ignored. Any whitespace, newlines included, may come between
    ``\\boxed`` and its ``{`` (LaTeX reads it as one box). ``\\boxed 5`` (no
    braces) takes the next token, up to whitespace, ``$`` or the end of the
    text. Contents are stripped.
    """
    return [content for content, _, _ in boxed_spans(text)]


def boxed_spans(text: str) -> list[tuple[str, int, int]]:
    """:func:`extract_boxed`'s boxes with where each is in ``text``:
    ``(contents, start, end)``, ``text[start:end]`` being the whole box
    (``\\boxed{...}``, or ``\\boxed 5`` up to its token's end)."""
    if not isinstance(text, str):
        return []
    out: list[tuple[str, int, int]] = []
    pos = 0
    n = len(text)
    while True:
        m = _BOX_RE.search(text, pos)
        if m is None:
            return out
        i = m.end()
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == "{":
            depth = 0
            j = i
            while j < n:
                c = text[j]
                if c == "\\" and j + 1 < n and text[j + 1] in "{}":
                    j += 2
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:  # unclosed: nothing after it can close it either
                return out
            out.append((text[i + 1 : j].strip(), m.start(), j + 1))
            pos = j + 1
        elif i > m.end() and i < n:  # "\boxed 5": one bare token
            j = i
            while j < n and not text[j].isspace() and text[j] != "$":
                j += 1
            token = text[i:j].rstrip(".,;")
            if token:
                out.append((token, m.start(), j))
            pos = j
        else:
            pos = m.end()


def last_boxed(text: str) -> str | None:
    """The last boxed answer of ``text`` (the model's final answer), or ``None``."""
    boxes = extract_boxed(text)
    return boxes[-1] if boxes else None


# ---------------------------------------------------------------------------
# <tag>...</tag>

_TAG_NAME_RE = re.compile(r"[A-Za-z][\w-]*")


def extract_tagged(text: str, tag: str = "answer") -> list[str]:
    """The contents of every closed ``<tag>...</tag>`` of ``text``, in order,
    stripped. Tags match case-insensitively and do not nest: a block runs from
    its ``<tag>`` to the next ``</tag>`` (an ``<tag>`` inside it is content); an
    unclosed last block is not an answer and is left out. ``tag`` is a bare name
    (letters, digits, ``_``, ``-``)."""
    if not isinstance(text, str) or not _TAG_NAME_RE.fullmatch(tag):
        return []
    opener = re.compile(rf"<{tag}>", re.IGNORECASE)
    closer = re.compile(rf"</{tag}>", re.IGNORECASE)
    out: list[str] = []
    pos = 0
    while (start := opener.search(text, pos)) is not None:
        end = closer.search(text, start.end())
        if end is None:  # unclosed: nothing after it can close it either
            break
        out.append(text[start.end() : end.start()].strip())
        pos = end.end()
    return out


# ---------------------------------------------------------------------------
# fenced code blocks

_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: ``language`` is the lower-cased info tag ('' if none);
    ``closed`` is False for a block that runs to the end of the text."""

    language: str
    code: str
    closed: bool = True


def extract_code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced code block of ``text`` in order.

    A fence is three or more backticks or tildes at the start of a line; a
    block closes at the next fence of the same character at least as long.
    An unclosed last block runs to the end of the text (``closed=False``).
    """
    if not isinstance(text, str):
        return []
    blocks: list[CodeBlock] = []
    pos = 0
    while True:
        m = _FENCE_RE.search(text, pos)
        if m is None:
            return blocks
        fence, lang = m.group(1), m.group(2).lower()
        body_start = m.end() + 1
        closer = re.compile(
            r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.MULTILINE
        )
        c = closer.search(text, body_start) if body_start <= len(text) else None
        if c is None:
            blocks.append(CodeBlock(lang, text[body_start:], closed=False))
            return blocks
        code = text[body_start : c.start()]
        if code.endswith("\n"):
            code = code[:-1]
        blocks.append(CodeBlock(lang, code, closed=True))
        pos = c.end()


def last_code_block(text: str, languages: tuple[str, ...] | None = None) -> CodeBlock | None:
    """The last block whose language is in ``languages`` (any block if ``None``;
    an untagged block matches too), or ``None``."""
    for block in reversed(extract_code_blocks(text)):
        if languages is None or block.language in languages or block.language == "":
            return block
    return None


# ---------------------------------------------------------------------------
# tool calls

_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)

#: Calls read from one assistant turn, both formats together; the rest are one
#: error. A turn of a million characters held about 14,000 calls, and each call
#: read becomes a tool message the conversation keeps.
MAX_TOOL_CALLS = 64

#: Levels of lists and objects a call's arguments may nest (``{}`` is one level);
#: deeper arguments are a malformed call. Everything downstream walks arguments
#: recursively at several stack frames a level (jsonschema's validation and the
#: ``repr`` in its error messages, copies, comparisons): arguments nested just
#: under the JSON parser's own limit (~990) raised RecursionError there, outside
#: any tool's guard. No tool schema nests near 64.
MAX_TOOL_CALL_DEPTH = 64

_REFUSED = "(refused: "


def refused_arguments(why: str) -> str:
    """The arguments that stand in for those of a call refused before parsing
    (the action bounds of :func:`gym_llm.envs.core.as_assistant_message`): not
    JSON, so no tool runs; the parser reports ``why`` as the call's error."""
    return f"{_REFUSED}{why})"


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists, tuples and dicts more than ``limit`` levels.
    Iterative: it must not itself recurse past Python's limit on what it checks."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


@dataclass(frozen=True)
class ToolCall:
    """A parsed call. ``arguments`` is always a dict (``{}`` when absent)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def to_openai(self) -> dict[str, Any]:
        """This call as an OpenAI ``tool_calls`` entry."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }


@dataclass(frozen=True)
class UnreadCall:
    """A tool call that could not be read: ``error`` says why (human-readable),
    ``id`` is the id a reply to it must carry (the call's own id when it gave
    one, else its position's ``call_<i>``, as for a well-formed call; empty for
    an error that answers no single call), ``name`` its tool name if known."""

    error: str
    id: str = ""
    name: str = ""


@dataclass(frozen=True)
class ToolCallParse:
    """What a message asked for: the well-formed ``calls`` and, for every call
    that could not be read, an :class:`UnreadCall` in ``unread``."""

    calls: list[ToolCall] = field(default_factory=list)
    unread: list[UnreadCall] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        """The human-readable error of each unread call, in order."""
        return [u.error for u in self.unread]


def message_text(message: Any) -> str:
    """The text content of an assistant turn given as a string or message dict."""
    if isinstance(message, str):
        return message
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # OpenAI content parts
            return "".join(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return ""


def _one_call(obj: Any, call_id: str) -> ToolCall | UnreadCall:
    if not isinstance(obj, dict):
        return UnreadCall(f"tool call {call_id} is not a JSON object", call_id)
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return UnreadCall(f"tool call {call_id} has no 'name'", call_id)
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str) and args.startswith(_REFUSED):
        return UnreadCall(f"tool call {call_id} ({name}): arguments {args[1:-1]}", call_id, name)
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError) as e:  # ValueError: also an over-long integer
            return UnreadCall(f"tool call {call_id} ({name}): arguments are not valid JSON: {e}", call_id, name)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return UnreadCall(f"tool call {call_id} ({name}): arguments must be a JSON object", call_id, name)
    if _nested_deeper(args, MAX_TOOL_CALL_DEPTH):
        return UnreadCall(f"tool call {call_id} ({name}): arguments nested too deeply "
                          f"(over {MAX_TOOL_CALL_DEPTH} levels)", call_id, name)
    return ToolCall(name=name, arguments=args, id=call_id)


def parse_tool_calls(message: Any) -> ToolCallParse:
    """Parse the tool calls of an assistant turn (a string or a message dict).

    OpenAI ``tool_calls`` entries are read first; then every
    ``<tool_call>...</tool_call>`` block of the text content (an unclosed last
    block runs to the end of the text). Ids are kept when given, otherwise
    ``call_0``, ``call_1``, ... in order. Malformed calls are reported in
    ``unread`` under the id a well-formed call in their place would have,
    never dropped silently: arguments nested deeper than
    :data:`MAX_TOOL_CALL_DEPTH` are malformed, and calls past the first
    :data:`MAX_TOOL_CALLS` are not read (one entry counts them, under the id of
    the first of them).
    """
    calls: list[ToolCall] = []
    unread: list[UnreadCall] = []

    def add(result: ToolCall | UnreadCall) -> None:
        (calls if isinstance(result, ToolCall) else unread).append(result)

    index = 0
    unread_count = 0
    first_unread_id = ""
    if isinstance(message, dict):
        raw = message.get("tool_calls") or []
        if not isinstance(raw, list):
            unread.append(UnreadCall("'tool_calls' must be a list"))
            raw = []
        if len(raw) > MAX_TOOL_CALLS:
            unread_count += len(raw) - MAX_TOOL_CALLS
            first_unread_id = _entry_id(raw[MAX_TOOL_CALLS], MAX_TOOL_CALLS)
        for entry in raw[:MAX_TOOL_CALLS]:
            cid = _entry_id(entry, index)
            index += 1
            if not isinstance(entry, dict):
                unread.append(UnreadCall(f"tool call {cid} is not an object", cid))
                continue
            fn = entry.get("function", entry)
            add(_one_call(fn, cid))
    text = message_text(message)
    if "<tool_call>" in text:
        for m in _TOOL_CALL_RE.finditer(text):
            if index >= MAX_TOOL_CALLS:
                # blocks as the regex reads them: an unclosed one swallows the rest
                unread_count += 1 + sum(1 for _ in _TOOL_CALL_RE.finditer(text, m.end()))
                first_unread_id = first_unread_id or f"call_{index}"
                break
            cid = f"call_{index}"
            index += 1
            body = m.group(1).strip()
            try:
                obj = json.loads(body)
            except (ValueError, RecursionError) as e:  # ValueError: also an over-long integer
                unread.append(UnreadCall(f"tool call {cid}: invalid JSON ({e.__class__.__name__}: {e})", cid))
                continue
            add(_one_call(obj, cid))
    if unread_count:
        unread.append(UnreadCall(f"{unread_count} more tool calls not read: at most {MAX_TOOL_CALLS} in one turn",
                                 first_unread_id))
    return ToolCallParse(calls, unread)


def _entry_id(entry: Any, index: int) -> str:
    """The id of OpenAI ``tool_calls`` entry number ``index``: its own, else ``call_<index>``."""
    own = entry.get("id") if isinstance(entry, dict) else None
    return str(own or f"call_{index}")
