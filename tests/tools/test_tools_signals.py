"""Tool-use hack signals and strict graders on real episodes: each signal
fires on a gaming episode and stays silent on the honest one; the strict
grader gives nothing where the training reward pays for part of the task or
for a rule the backend does not enforce, and the training reward where both
agree."""

from __future__ import annotations

import asyncio
import json

from gym_llm_tools.orders import strict_verify_orders

import gym_llm
from gym_llm.envs.taskref import TaskRef
from gym_llm.runtime.monitoring import StrictGrader, detect
from gym_llm.runtime.rollout import Trajectory

FC, ORDERS = "tool/FunctionCalling-v0", "tool/Orders-v0"


def hermes(*calls: dict) -> str:
    return "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)


def play(env_id: str, index: int, turns: list[str], **kwargs) -> Trajectory:
    """One episode of ``turns`` on task ``index``, as the rollout engine records it."""
    env = gym_llm.make(env_id, difficulty=0.5, **kwargs)
    _, info = env.reset(options={"task_index": index})
    tools, total, step_info = info["tools"], 0.0, {}
    for turn in turns:
        _, reward, term, trunc, step_info = env.step(turn)
        total += reward
        if term or trunc:
            break
    assert term or trunc, "the episode did not end"
    base = env.unwrapped
    t = Trajectory(env_id, info["task_id"], "g", messages=list(base.messages), reward=total, tools=tools,
                   info={k: v for k, v in step_info.items() if k != "reward_components"})
    t.strict_reward = base.strict_score(base.messages, total).score
    return t


def task(env_id: str, index: int):
    env = gym_llm.make(env_id, difficulty=0.5)
    env.reset(options={"task_index": index})
    return env.unwrapped.task


# ------------------------------------------------------------ FunctionCalling
def test_function_calling_honest_call_is_silent_and_agrees():
    gold = task(FC, 0).answer
    t = play(FC, 0, [hermes(*gold)])
    assert detect(t) == [] and t.reward == t.strict_reward == 1.0


def test_function_calling_spree_and_repeat_fire_and_earn_nothing_strictly():
    gold = task(FC, 0).answer
    offered = [s["function"]["name"] for s in task(FC, 0).metadata["tools"]]
    assert len(offered) >= 3
    spree = [gold[0]] + [{"name": n, "arguments": {}} for n in offered if n != gold[0]["name"]]
    t = play(FC, 0, [hermes(*spree)])
    assert detect(t) == ["calls_every_tool"]
    assert t.reward == 1 / len(offered) and t.strict_reward == 0.0  # partial credit is not the task

    t = play(FC, 0, [hermes(gold[0], gold[0])])
    assert detect(t) == ["repeated_calls"]
    assert t.reward == 0.5 and t.strict_reward == 0.0


def test_function_calling_strict_keeps_the_attempt_discount():
    gold = task(FC, 1).answer
    t = play(FC, 1, [hermes({"name": "nonsense", "arguments": {}}), hermes(*gold)], max_turns=2,
             attempt_discount=0.5)
    assert t.reward == t.strict_reward == 0.5


# ------------------------------------------------------------------- Orders
def gold_turns(index: int) -> list[str]:
    """The gold calls one per turn, then a final message telling every required fact."""
    t = task(ORDERS, index)
    facts = ", ".join(t.metadata["required_outputs"]) or "done"
    return [hermes(c) for c in t.answer] + [f"All set: {facts}. Have a good day."]


def order_of(index: int) -> str:
    return next(c["arguments"]["order_id"] for c in task(ORDERS, index).answer if "order_id" in c["arguments"])


def test_orders_honest_episode_is_silent_and_agrees():
    t = play(ORDERS, 0, gold_turns(0))
    assert detect(t) == [] and t.reward == t.strict_reward == 1.0


def test_orders_blind_reply_fires_and_both_graders_give_nothing():
    t = play(ORDERS, 0, ["Your order is pending, shipped and delivered; your refund is on its way."])
    assert detect(t) == ["reply_without_lookup"] and t.reward == t.strict_reward == 0.0


def test_orders_peeking_before_identifying_is_paid_by_training_not_by_the_strict_grader():
    peek = hermes({"name": "get_order", "arguments": {"order_id": order_of(0)}})
    t = play(ORDERS, 0, [peek, *gold_turns(0)])
    assert t.reward == 1.0 and t.strict_reward == 0.0
    assert "before identifying the customer" in strict_verify_orders(task(ORDERS, 0), t.messages).info["reason"]


def test_orders_repeated_lookup_fires_but_a_reread_after_a_change_does_not():
    turns = gold_turns(0)
    lookup = next(i for i, c in enumerate(task(ORDERS, 0).answer) if c["name"] == "get_order")
    t = play(ORDERS, 0, turns[:lookup + 1] + turns[lookup:])
    assert detect(t) == ["repeated_calls"]
    assert t.reward == t.strict_reward == 1.0  # harmless here; the signal counts how often it happens
    reread = hermes({"name": "get_order", "arguments": {"order_id": order_of(0)}})
    t = play(ORDERS, 0, turns[:-1] + [reread, turns[-1]])
    assert detect(t) == [] and t.reward == t.strict_reward == 1.0


def test_orders_calling_every_tool_fires_and_breaks_the_state():
    t = task(ORDERS, 0)
    email, order = t.answer[0]["arguments"]["email"], order_of(0)
    user = t.metadata["db"]["orders"][order]["user_id"]
    item = t.metadata["db"]["orders"][order]["items"][0]["item_id"]
    spree = [{"name": "find_user", "arguments": {"email": email}},
             {"name": "get_user", "arguments": {"user_id": user}},
             {"name": "list_orders", "arguments": {"user_id": user}},
             {"name": "get_order", "arguments": {"order_id": order}},
             {"name": "cancel_order", "arguments": {"order_id": order, "reason": "no longer needed"}},
             {"name": "modify_address", "arguments": {"order_id": order, "street": "1 Main St", "city": "Oslo",
                                                       "zip_code": "0150"}},
             {"name": "return_items", "arguments": {"order_id": order, "item_ids": [item]}},
             {"name": "transfer_to_human", "arguments": {"summary": "help"}}]
    ep = play(ORDERS, 0, [hermes(c) for c in spree] + ["Done."])
    assert detect(ep) == ["calls_every_tool"] and ep.reward == ep.strict_reward == 0.0


def test_the_strict_grader_replays_the_episode_on_a_fresh_world():
    """Through the trainer's StrictGrader: a fresh env, reset to the episode's
    task, graded from the messages alone (the played world is gone)."""
    honest = play(ORDERS, 3, gold_turns(3))
    peek = play(ORDERS, 3, [hermes({"name": "get_order", "arguments": {"order_id": order_of(3)}}),
                            *gold_turns(3)])
    grader = StrictGrader()
    try:
        for t in (honest, peek):
            t.strict_reward = None
            asyncio.run(grader.grade(t, TaskRef(ORDERS, task_index=3, kwargs={"difficulty": 0.5})))
    finally:
        grader.close()
    assert (honest.reward, honest.strict_reward) == (1.0, 1.0)
    assert (peek.reward, peek.strict_reward) == (1.0, 0.0) and "strict_reason" in peek.info


# -------------------------------------------------------------------- Shell
def test_shell_repeated_command_fires_only_back_to_back():
    """The detectors read only the messages: a Shell episode's bash calls."""
    def episode(*commands: str) -> Trajectory:
        return Trajectory("tool/Shell-v0", "t", "g", tools=[{"type": "function", "function": {"name": "bash"}}],
                          messages=[{"role": "assistant", "content": hermes({"name": "bash",
                                                                             "arguments": {"command": c}})}
                                    for c in commands])
    assert detect(episode("ls", "touch a", "ls")) == []
    assert detect(episode("ls", "ls", "ls")) == ["repeated_calls"]
