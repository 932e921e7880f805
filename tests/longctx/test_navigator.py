"""DocNavigator: the document stays out of the prompt; search/read tools; the turn budget."""

from __future__ import annotations

import json
import re

import pytest
from gym_llm_longctx.tokens import ApproxCounter

import gym_llm


def _call(name: str, args: dict, fmt: str, i: int = 0):
    if fmt == "openai":
        return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return f'<tool_call>{json.dumps({"name": name, "arguments": args})}</tool_call>'


def _turn(calls: list, fmt: str):
    if fmt == "openai":
        return {"role": "assistant", "content": None, "tool_calls": calls}
    return "".join(calls)


def oracle(env, fmt: str = "hermes") -> tuple[float, int, dict]:
    """Plays the env by search and read only, following 'the same as' links to
    the number; returns (last reward, turns played, last info) when the episode ends."""
    obs, _ = env.reset(options={"task_index": 0})
    key = re.search(r"special magic number for ([a-z]+-[a-z]+)\?", obs[-1]["content"]).group(1)
    turns, value = 0, None
    while True:
        if value is not None:
            action = f"The number is \\boxed{{{value}}}."
        elif turns % 2 == 0:
            action = _turn([_call("search", {"query": key}, fmt)], fmt)
        else:
            pages = [int(p) for p in re.search(r": ([\d, ]+) \(", obs[0]["content"]).group(1).split(", ")]
            action = _turn([_call("read", {"page": p}, fmt, i) for i, p in enumerate(pages)], fmt)
        obs, reward, term, trunc, info = env.step(action)
        turns += 1
        if term or trunc:
            return reward, turns, info
        if turns % 2 == 0:  # pages were read
            text = " ".join(m["content"] for m in obs)
            link = re.search(rf"The special magic number for {key} is the same as the special magic "
                             r"number for ([a-z]+-[a-z]+)\.", text)
            if link:
                key = link.group(1)
            else:
                value = re.search(rf"The special magic number for {key} is (\d+)\.", text).group(1)


def test_the_document_is_not_in_the_prompt():
    env = gym_llm.make("longctx/DocNavigator-v0", difficulty=0.3)
    obs, info = env.reset(seed=0)
    task = env.unwrapped.task
    shown = json.dumps(obs)
    assert task.answer not in shown
    assert not any(v in shown for v in task.metadata["candidates"])
    for page in task.metadata["pages"]:
        assert page[:60] not in shown and page[-60:] not in shown
    assert {t["function"]["name"] for t in info["tools"]} == {"search", "read"}
    assert obs[0]["role"] == "system" and "<tools>" in obs[0]["content"]
    assert f"{len(task.metadata['pages'])} pages" in obs[-1]["content"]


@pytest.mark.parametrize(("hops", "fmt"), [(0, "hermes"), (2, "openai"), (2, "hermes")])
def test_an_agent_that_searches_and_reads_earns_full_reward(hops, fmt):
    env = gym_llm.make("longctx/DocNavigator-v0", hops=hops, num_distractors=6, context_tokens=8192)
    reward, turns, info = oracle(env, fmt)
    assert reward == 1.0 and info["reward_components"]["recall"] == 1.0
    assert turns == 2 * (hops + 1) + 1 and info["searches"] == hops + 1
    assert info["pages_read"]


def test_the_turn_budget_truncates_with_nothing():
    env = gym_llm.make("longctx/DocNavigator-v0", max_turns=3)
    env.reset(seed=1)
    for _ in range(3):
        _, reward, term, trunc, info = env.step(_call("search", {"query": "special magic"}, "hermes"))
    assert trunc and not term and reward == 0.0
    assert "turn budget" in info["reason"] and info["searches"] == 3
    # Two hops take 7 turns: a budget of 6 cuts off even a perfect navigator.
    reward, turns, info = oracle(gym_llm.make("longctx/DocNavigator-v0", hops=2, max_turns=6))
    assert (reward, turns) == (0.0, 6) and "turn budget" in info["reason"]
    reward, turns, _ = oracle(gym_llm.make("longctx/DocNavigator-v0", hops=2, max_turns=7))
    assert (reward, turns) == (1.0, 7)


def test_tools_answer_mistakes_with_errors_never_exceptions():
    env = gym_llm.make("longctx/DocNavigator-v0")
    env.reset(seed=2)
    n = len(env.unwrapped.task.metadata["pages"])
    calls = [_call("read", {"page": 0}, "openai", 0), _call("read", {"page": "two"}, "openai", 1),
             _call("search", {"query": "  ?! "}, "openai", 2), _call("open", {}, "openai", 3),
             _call("search", {"query": "zebra unicorn"}, "openai", 4),
             _call("read", {"page": n}, "openai", 5)]
    obs, reward, term, trunc, info = env.step({"role": "assistant", "content": None, "tool_calls": calls})
    assert not (term or trunc) and reward == 0.0
    contents = [m["content"] for m in obs]
    assert contents[0].startswith("Error") and f"between 1 and {n}" in contents[0]
    assert contents[1].startswith("Error: invalid arguments")
    assert contents[2].startswith("Error") and "no words" in contents[2]
    assert contents[3].startswith("Error: unknown tool")
    assert contents[4].startswith("No page contains all of: zebra unicorn")
    assert contents[5].startswith(f"Page {n} of {n}:")
    assert info["tool_errors"] == 4


def test_search_ranks_pages_and_facts_are_where_recorded():
    env = gym_llm.make("longctx/DocNavigator-v0", num_distractors=8, context_tokens=16384).unwrapped
    env.reset(seed=3)
    task = env.task
    pages = task.metadata["pages"]
    for fact in task.metadata["facts"]:
        assert fact["text"] in pages[fact["page"] - 1]
        key = re.search(r"for ([a-z]+-[a-z]+)", fact["text"]).group(1)
        listed = env.search(key)
        assert str(fact["page"]) in re.search(r": ([\d, ]+) \(", listed).group(1).split(", ")
    counter = ApproxCounter()
    sizes = [counter.count(p) for p in pages]
    assert len(pages) == round(task.metadata["document_tokens"] / env.page_tokens)
    assert all(0.7 * env.page_tokens < s < 1.3 * env.page_tokens for s in sizes[:-1])
    assert sum(sizes) <= task.metadata["context_tokens"]
    both = [i + 1 for i, p in enumerate(pages) if "special" in p and "magic" in p]
    assert env.search("Special MAGIC").endswith(
        f"({min(len(both), env.results_per_search)} of {len(both)} shown).")


def test_hedging_at_the_end_of_a_search_earns_nothing():
    env = gym_llm.make("longctx/DocNavigator-v0", num_distractors=4)
    env.reset(seed=4)
    every = env.unwrapped.task.metadata["candidates"]
    _, reward, term, _, info = env.step("\\boxed{" + ", ".join(every) + "}")
    assert term and reward == 0.0 and "hedging" in info["reason"]
