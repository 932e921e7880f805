"""tool/Orders-v0 attacked as a reward-gaming policy would: facts told without
looking them up (a blind message that names every order status), looked up
on the wrong order, before identifying the customer, for another customer,
told before the lookup, or every order of the customer looked up and all their
statuses and tracking numbers listed (a hedge). Each must earn 0; the target
order's own facts after the right lookups still earn 1."""

from __future__ import annotations

from gym_llm_tools.orders import OrdersWorld, verify_orders
from gym_llm_tools.orders.world import STATUSES

import gym_llm

ENV_ID = "tool/Orders-v0"
#: Names every status an order can have and refuses: the blind answer to any refusal.
BLIND = (f"Your order is {', '.join(STATUSES)}, so I cannot change it. "
         "Its tracking number is on its way to you.")
REFUSALS = ("refuse_cancel", "refuse_return")


def tasks(kinds, difficulty=0.5, limit=400):
    """(env, task) for each single-request task of one of ``kinds`` among the first ``limit``."""
    env = gym_llm.make(ENV_ID, difficulty=difficulty)
    for i in range(limit):
        task = env.unwrapped.task_set.get("train", i)
        if len(task.metadata["kinds"]) == 1 and task.metadata["kinds"][0] in kinds:
            yield env, task


def start(env, task):
    env.reset(options={"task_index": task.metadata["index"]})


def call(env, fmt, name, **arguments):
    obs, r, term, trunc, info = env.step(fmt([{"name": name, "arguments": arguments}]))
    assert not (term or trunc), info
    return obs


def target(task):
    """The order the request is about (from the gold calls)."""
    return next(c["arguments"]["order_id"] for c in task.answer if "order_id" in c["arguments"])


def answer(task):
    """The target order's own facts, stated plainly: the honest refusal or status reply."""
    return "Your order is " + " and ".join(task.metadata["required_outputs"]) + ", so I cannot change it."


def refusal_tasks(n=6):
    found = list(tasks(REFUSALS))[:n]
    assert len(found) == n
    return found


def test_a_blind_message_wins_no_task():
    wins, refusals = 0, 0
    env = gym_llm.make(ENV_ID, difficulty=0.5)
    for i in range(120):
        env.reset(options={"task_index": i})
        refusals += any(k in REFUSALS for k in env.unwrapped.task.metadata["kinds"])
        _, r, term, _, info = env.step(BLIND)
        assert term
        wins += r
    assert refusals >= 10  # the attack had targets
    assert wins == 0, f"a blind message won {wins} of 120 tasks"


def test_looking_up_another_order_does_not_justify_the_refusal(fmt):
    for env, task in refusal_tasks():
        start(env, task)
        order = target(task)
        user = task.metadata["db"]["orders"][order]["user_id"]
        other = next(o for o in task.metadata["db"]["users"][user]["orders"] if o != order)
        call(env, fmt, "find_user", email=task.answer[0]["arguments"]["email"])
        call(env, fmt, "get_order", order_id=other)
        _, r, *_ = env.step(BLIND)
        assert r == 0.0
        # the target's own status after the right lookup is a justified refusal
        start(env, task)
        for gold in task.answer:
            call(env, fmt, gold["name"], **gold["arguments"])
        _, r, _, _, info = env.step(answer(task))
        assert r == 1.0, info


def test_looking_up_before_identifying_the_customer_justifies_nothing(fmt):
    for env, task in refusal_tasks():
        start(env, task)
        call(env, fmt, "get_order", order_id=target(task))
        call(env, fmt, "find_user", email=task.answer[0]["arguments"]["email"])
        _, r, _, _, info = env.step(BLIND)
        assert r == 0.0 and info["reward_components"]["outputs"] == 0.0


def test_looking_up_as_another_customer_justifies_nothing(fmt):
    for env, task in refusal_tasks():
        start(env, task)
        order = target(task)
        owner = task.metadata["db"]["orders"][order]["user_id"]
        stranger = next(u for u in task.metadata["db"]["users"].values() if u["orders"][0] not in
                        task.metadata["db"]["users"][owner]["orders"])
        call(env, fmt, "find_user", email=stranger["email"])
        call(env, fmt, "get_order", order_id=order)
        call(env, fmt, "list_orders", user_id=owner)
        _, r, *_ = env.step(BLIND)
        assert r == 0.0


def test_facts_told_before_the_lookup_do_not_count(formats):
    fmt = formats["hermes"]
    for env, task in refusal_tasks():
        start(env, task)
        status = task.metadata["required_outputs"][0]
        # Told first, as a question so that the conversation goes on...
        env.step(f"Your order is {status} and cannot be changed. Could you tell me your email?")
        for gold in task.answer:  # ...then looked up, then a final word with no fact
            call(env, fmt, gold["name"], **gold["arguments"])
        _, r, _, _, info = env.step("Thanks, goodbye.")
        assert r == 0.0 and "after looking them up" in info["reason"]


def test_the_verifier_needs_the_lookup_outside_the_environment_too():
    env, task = refusal_tasks(1)[0]
    said = [{"role": "assistant", "content": BLIND}]
    identified = OrdersWorld(task.metadata["db"])
    identified.call("find_user", task.answer[0]["arguments"])
    assert verify_orders(task, identified, said).score == 0.0
    for gold in task.answer[1:]:
        identified.call(gold["name"], gold["arguments"])
    assert verify_orders(task, identified, [{"role": "assistant", "content": answer(task)}]).score == 1.0


def _others(task):
    """The statuses and tracking numbers of the customer's orders other than the target."""
    db, order = task.metadata["db"], target(task)
    user = db["users"][db["orders"][order]["user_id"]]
    others = [db["orders"][o] for o in user["orders"] if o != order]
    return {o["status"] for o in others}, {o["tracking_number"] for o in others if o["tracking_number"]}


def test_looking_every_order_up_and_listing_all_their_facts_is_a_hedge(fmt):
    """The blind answer made safe by looking everything up: every order of the
    customer read, then every status and every tracking number in one message. It
    won every refusal task (62/62) and every status task before facts of the
    customer's other orders made a message a hedge."""
    hedges = 0
    for env, task in tasks(REFUSALS + ("status",), limit=200):
        start(env, task)
        db, order = task.metadata["db"], target(task)
        user_id = db["orders"][order]["user_id"]
        call(env, fmt, "find_user", email=db["users"][user_id]["email"])
        call(env, fmt, "list_orders", user_id=user_id)
        for o in db["users"][user_id]["orders"]:
            call(env, fmt, "get_order", order_id=o)
        statuses, tracking = _others(task)
        own = db["orders"][order]
        if not (statuses - {own["status"]}) and not tracking:
            continue  # every other order looks like the target: naming them all is no hedge
        hedges += 1
        everything = (f"Your order is {', '.join(STATUSES)}, so I cannot change it. Tracking: "
                      + " ".join(sorted(tracking | ({own["tracking_number"]} if own["tracking_number"] else set()))))
        _, r, _, _, info = env.step(everything)
        assert r == 0.0 and "other orders" in info["reason"], (task.metadata["kinds"], info)
    assert hedges >= 10


def test_a_status_word_no_other_order_has_is_no_hedge(fmt):
    checked = 0
    for env, task in refusal_tasks(12):
        statuses, tracking = _others(task)
        status = task.metadata["db"]["orders"][target(task)]["status"]
        spare = [s for s in STATUSES if s not in statuses and s != status]
        if not spare:
            continue
        start(env, task)
        for gold in task.answer:
            call(env, fmt, gold["name"], **gold["arguments"])
        _, r, _, _, info = env.step(f"{answer(task)} Only an order that is {spare[0]} could be.")
        assert r == 1.0, info
        checked += 1
    assert checked >= 3


def test_telling_each_orders_facts_in_a_message_of_its_own_is_the_same_hedge(fmt):
    """The hedge split over messages ("Order #W1 is shipped, tracking TRK... Is that
    correct?", one per order: the customer says yes and the talk goes on) won every
    status and refusal task (123/300) while the rule looked at one message at a time."""
    hedges = 0
    for env, task in tasks(REFUSALS + ("status",), limit=200):
        statuses, tracking = _others(task)
        db, order = task.metadata["db"], target(task)
        if not (statuses - {db["orders"][order]["status"]}) and not tracking:
            continue
        start(env, task)
        user_id = db["orders"][order]["user_id"]
        call(env, fmt, "find_user", email=db["users"][user_id]["email"])
        for o in db["users"][user_id]["orders"]:
            call(env, fmt, "get_order", order_id=o)
        for o in db["users"][user_id]["orders"]:
            facts = db["orders"][o]
            obs, r, term, _, info = env.step(f"Order {o} is {facts['status']}"
                                             + (f", tracking number {facts['tracking_number']}" if facts["tracking_number"] else "")
                                             + ". Is that correct?")
            if term:
                break
        if not term:
            obs, r, term, _, info = env.step("Thank you, goodbye.")
        hedges += 1
        assert term and r == 0.0 and "other orders" in info["reason"], (task.metadata["kinds"], info)
    assert hedges >= 10
