"""Assistant turns of each kind for the adapters' parity tests: ``right`` (a
task's reference answer, in its domain's format), ``wrong``, ``empty`` and
``malformed``; every adapter test plays the same ones."""

from __future__ import annotations

import json
from typing import Any

import gym_llm

KINDS = ("right", "wrong", "empty", "malformed")

#: Turns that are no answer to any task: a wrong number and a program that
#: prints nothing useful; an unclosed tool call and box.
WRONG = "\\boxed{-987654321} ```python\nprint(0)\n```"
MALFORMED = '<tool_call>{"name": </tool_call> \\boxed{'


def right_turns(env_id: str, answer: Any) -> list[str]:
    """The reference ``answer`` of an ``env_id`` task as its assistant turns:
    code in a fenced block; a repository task's files (``{path: content}``)
    written by ``write_file`` calls, then ``submit``; a tool episode's calls as
    ``<tool_call>`` blocks, then a closing turn; any other answer boxed."""
    domain = env_id.split("/")[0]
    if domain == "code" and isinstance(answer, dict):
        calls = [{"name": "write_file", "arguments": {"path": path, "content": content}}
                 for path, content in answer.items()]
        return ["".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in [*calls, {"name": "submit", "arguments": {}}])]
    if domain == "code":
        return [f"```python\n{answer}\n```"]
    if domain == "tool":
        return ["".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in answer), "Done."]
    if isinstance(answer, list):
        return ["\\boxed{" + ", ".join(map(str, answer)) + "}"]
    return ["\\boxed{" + str(answer) + "}"]


def turns(env_id: str, kind: str, seed: int, task_index: int) -> list[Any]:
    """The assistant turns of ``kind`` for one task. ``malformed`` turns
    include actions of the wrong type (an int, a user message, None, bytes):
    what a buggy peer could hand an adapter."""
    if kind == "right":
        env = gym_llm.make(env_id, seed=seed)
        try:
            env.reset(seed=seed, options={"task_index": task_index})
            return right_turns(env_id, env.unwrapped.task.answer)
        finally:
            env.close()
    return {"wrong": [WRONG], "empty": [""],
            "malformed": [MALFORMED, 12345, {"role": "user", "content": "hi"}, None, b"\xff\xfe"]}[kind]
