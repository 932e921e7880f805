"""tool/Orders-v0: gold replay, doing nothing, policy violations, wrong
state, untold facts, the scripted customer, malformed calls, determinism."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gym_llm_tools.orders import OrdersWorld, ScriptedUser, verify_orders
from gym_llm_tools.orders.env import fact_told
from gym_llm_tools.orders.tasks import KINDS

import gym_llm

ENV_ID = "tool/Orders-v0"


def find(kind, difficulty=0.6, limit=300, **where):
    """(env, task_index) of the first single-request task of ``kind``."""
    env = gym_llm.make(ENV_ID, difficulty=difficulty)
    for i in range(limit):
        task = env.unwrapped.task_set.get("train", i)
        if task.metadata["kinds"] == [kind] and all(task.metadata.get(k) == v for k, v in where.items()):
            env.reset(options={"task_index": i})
            return env, task
    raise AssertionError(f"no {kind} task in {limit}")


def final_message(task):
    return "All done: " + ", ".join(task.metadata["required_outputs"]) + "."


def test_registered_with_tools_and_policy_in_the_prompt():
    spec = gym_llm.spec(ENV_ID)
    assert spec.plugin == "gym-llm-tools" and spec.kwargs == {"difficulty": 0.5, "max_turns": 16}
    env = gym_llm.make(ENV_ID, seed=0)
    obs, info = env.reset()
    names = [t["function"]["name"] for t in info["tools"]]
    assert names == list(OrdersWorld.TOOL_NAMES)
    assert "Only pending orders can be cancelled" in obs[0]["content"]
    assert all(json.dumps(t, sort_keys=True) in obs[0]["content"] for t in info["tools"])
    assert info["max_turns"] == 16 and obs[1]["role"] == "user"


@pytest.mark.parametrize("difficulty", [0.0, 0.5, 1.0])
def test_gold_replay_earns_one_and_doing_nothing_does_not(fmt, replay, difficulty):
    env = gym_llm.make(ENV_ID, difficulty=difficulty)
    seen = set()
    for i in range(40):
        env.reset(options={"task_index": i})
        task = env.unwrapped.task
        seen.update(task.metadata["kinds"])
        total, info = replay(env, task.answer, fmt, final_message(task))
        assert total == 1.0, (info, task.metadata["kinds"])
        assert info["reward_components"] == {"policy": 1.0, "state": 1.0, "outputs": 1.0}
        env.reset(options={"task_index": i})
        _, r, term, _, info = env.step("Goodbye.")
        assert r == 0.0 and term and info["reason"]
    if difficulty == 0.0:
        assert seen == {"status", "cancel"}
    if difficulty == 1.0:
        assert seen == set(KINDS)


def test_difficulty_zero_gives_every_fact_up_front():
    env = gym_llm.make(ENV_ID, difficulty=0.0)
    for i in range(20):
        obs, _ = env.reset(options={"task_index": i})
        task = env.unwrapped.task
        assert task.answer[0]["arguments"]["email"] in obs[1]["content"]
        assert all(c["arguments"].get("order_id", "#") in obs[1]["content"] for c in task.answer)


def test_cancelling_a_shipped_order_breaks_policy_and_earns_zero(formats):
    env, task = find("refuse_cancel")
    order_id = task.answer[-1]["arguments"]["order_id"]
    status = task.metadata["db"]["orders"][order_id]["status"]
    env.step(formats["hermes"]([task.answer[0]]))
    obs, *_ = env.step(formats["openai"]([{"name": "cancel_order",
                                            "arguments": {"order_id": order_id, "reason": "no longer needed"}}]))
    assert '"status": "cancelled"' in obs[0]["content"]  # the backend did it...
    _, r, term, _, info = env.step(f"Cancelled. Your order was {status}. " + final_message(task))
    assert term and r == 0.0 and info["reward_components"]["policy"] == 0.0  # ...and the policy forbade it
    assert info["violations"] == [f"cancel_order on a {status} order"]


def test_acting_before_identifying_the_customer_breaks_policy(formats):
    env, task = find("cancel")
    env.step(formats["hermes"](task.answer[1:]))  # cancel without find_user
    env.step(formats["hermes"](task.answer[:1]))
    _, r, _, _, info = env.step(final_message(task))
    assert r == 0.0 and info["violations"] == ["cancel_order before identifying the customer"]


def test_wrong_state_or_untold_facts_earn_zero(formats):
    env, task = find("cancel")
    call = task.answer[-1]
    other = "ordered by mistake" if call["arguments"]["reason"] == "no longer needed" else "no longer needed"
    wrong = {"name": "cancel_order", "arguments": {**call["arguments"], "reason": other}}
    env.step(formats["hermes"](task.answer[:-1]))
    env.step(formats["hermes"]([wrong]))
    _, r, _, _, info = env.step(final_message(task))
    assert r == 0.0 and info["reward_components"]["state"] == 0.0 and "state" in info["reason"]

    env.reset(options={"task_index": task.metadata["index"]})
    for c in task.answer:
        env.step(formats["openai"]([c]))
    _, r, _, _, info = env.step("Your order is cancelled.")  # refund not told
    assert r == 0.0 and info["reward_components"] == {"policy": 1.0, "state": 1.0, "outputs": 0.0}


def test_facts_told_only_in_messages_to_the_customer():
    env, task = find("status")
    status = task.metadata["required_outputs"][0]
    env.step(f'<tool_call>{{"name": "find_user", "arguments": {{"email": "{status}"}}}}</tool_call>')
    env.step('<tool_call>' + json.dumps(task.answer[0]) + '</tool_call>')
    env.step('<tool_call>' + json.dumps(task.answer[1]) + '</tool_call>')
    _, r, *_ = env.step("Done.")
    assert r == 0.0  # the status only appeared inside a tool call
    assert fact_told("45.50", ["That is $45.5 refunded"]) and fact_told("1234.00", ["total 1,234"])
    assert fact_told("shipped", ["It has SHIPPED."]) and not fact_told("shipped", ["unshipped"])
    assert not fact_told("45.50", ["45.51"])


def test_scripted_customer_answers_from_the_persona():
    user = ScriptedUser({"request": "Cancel my order.",
                         "answers": {"email": "My email is a@b.c.", "order": "It's order #W1.",
                                     "reason": "I ordered it by mistake."}})
    assert user.reply("Could you tell me your email address?") == "My email is a@b.c."
    assert user.reply("What is your order number? And why do you want to cancel?") == \
        "It's order #W1. I ordered it by mistake."
    assert user.reply("Please provide your e-mail.") == "My email is a@b.c."
    assert user.reply("I will cancel #W1 now. Shall I proceed?") == "Yes, please go ahead."
    assert user.reply("What is your new address?") == "I'm not sure."
    assert user.reply("How are you today?") == "Sorry, I'm not sure what you mean. Cancel my order."
    assert user.reply("Your order #W1 is cancelled. Is there anything else I can help with?") is None
    assert user.reply("Your order number #W1 is cancelled.") is None  # no question: the end
    assert user.reply("") is None


def test_questions_get_answers_and_the_episode_continues():
    env, task = find("cancel", difficulty=1.0)
    obs, r, term, trunc, _ = env.step("Sure. What is your email address?")
    assert obs == [{"role": "user", "content": f"My email is {task.answer[0]['arguments']['email']}."}]
    assert r == 0.0 and not term and not trunc


def test_malformed_tool_calls_become_error_messages(formats):
    env, task = find("status")
    obs, r, term, _, info = env.step('<tool_call>{"name": "get_order", "arguments": {oops}</tool_call>')
    assert not term and r == 0.0 and "invalid JSON" in obs[0]["content"] and info["reason"]
    obs, r, _, _, info = env.step(formats["openai"]([{"name": "get_order", "arguments": {"order_id": 5}}]))
    assert "invalid arguments" in obs[0]["content"] and r == 0.0
    obs, *_ = env.step(formats["hermes"]([{"name": "drop_database", "arguments": {}}]))
    assert "unknown tool" in obs[0]["content"]
    obs, *_ = env.step(formats["hermes"]([{"name": "get_order", "arguments": {"order_id": "#W0000000"}}]))
    assert obs[0]["content"].startswith("Error: LookupError")


def test_truncation_scores_the_episode():
    env, task = find("address", difficulty=0.6)
    env = gym_llm.make(ENV_ID, difficulty=0.6, max_turns=len(task.answer))
    env.reset(options={"task_index": task.metadata["index"]})
    for call in task.answer:
        _, r, term, trunc, _ = env.step("<tool_call>" + json.dumps(call) + "</tool_call>")
    assert trunc and not term and r == 1.0  # the address task has no fact to tell


def test_verifier_works_outside_the_environment():
    env, task = find("return")
    world = OrdersWorld(task.metadata["db"])
    for call in task.answer:
        world.call(call["name"], call["arguments"])
    said = [{"role": "assistant", "content": final_message(task)}]
    assert verify_orders(task, world, said).score == 1.0
    assert verify_orders(task, OrdersWorld(task.metadata["db"]), said).score == 0.0
    assert task.metadata["db"] != world.db  # the task's database is never mutated


def test_same_transcript_and_reward_in_another_process():
    actions = ["What is your email?", "And the order number?",
               '<tool_call>{"name": "find_user", "arguments": {"email": "nobody@example.com"}}</tool_call>',
               "Thanks, we are done."]

    def run():
        env = gym_llm.make(ENV_ID, seed=5, difficulty=0.9)
        obs, info = env.reset()
        log = [info["task_id"], obs]
        for a in actions:
            log.append(list(env.step(a)))
        return json.loads(json.dumps(log))

    code = (
        "import json, gym_llm\n"
        f"actions = {actions!r}\n"
        "env = gym_llm.make('tool/Orders-v0', seed=5, difficulty=0.9)\n"
        "obs, info = env.reset()\n"
        "log = [info['task_id'], obs] + [list(env.step(a)) for a in actions]\n"
        "print(json.dumps(log))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == run()
