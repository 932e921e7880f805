"""``tool/Orders-v0``: a multi-turn customer-service episode in a stateful
order world, with a scripted customer and the store's policy.

Each assistant turn either calls tools (answered by tool messages) or talks
to the customer (answered by :class:`~gym_llm_tools.orders.user.ScriptedUser`);
the episode ends when the customer ends the conversation (the agent's message
asked nothing, or only "anything else?") or at ``max_turns``.

Reward (:func:`verify_orders`, 1.0 or 0.0): no change broke the policy, the
final database equals the one the gold actions produce (canonical hash), and
every required fact was told to the customer *after* it was looked up: a fact
about an order counts only in a message that follows a tool call showing that
order of the identified customer (``get_order``, ``list_orders``, or the
change that produced the refund), so a blind message naming every status
earns nothing. And a status or tracking number counts only in a conversation
that names no status or tracking number that only the customer's *other*
orders have: telling every order's facts after looking them all up, in one
message or one per order, is a hedge, not an answer about the order the
customer meant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gym_llm import ProceduralTasks, RewardResult, Task, ToolEnv, Turn
from gym_llm.envs.parsing import message_text, parse_tool_calls
from gym_llm.envs.tools import Tool, validate_arguments

from ..signals import ORDERS_SIGNALS
from .tasks import TRACKING, generate_orders_task
from .user import ScriptedUser
from .world import STATUSES, OrdersWorld

__all__ = ["OrdersEnv", "verify_orders", "strict_verify_orders", "fact_told", "said_to_user"]

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _said_with_turns(messages: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
    """``(turn, text)`` of the assistant turns the customer saw; ``turn``
    counts assistant messages from 1, as :attr:`OrdersWorld.turn` does."""
    out = []
    turn = 0
    for m in messages:
        if m.get("role") != "assistant":
            continue
        turn += 1
        parsed = parse_tool_calls(m)
        if not parsed.calls and not parsed.errors:
            out.append((turn, message_text(m)))
    return out


def said_to_user(messages: Sequence[dict[str, Any]]) -> list[str]:
    """Texts of the assistant turns the customer saw (turns without tool calls)."""
    return [text for _, text in _said_with_turns(messages)]


def fact_told(fact: str, texts: Sequence[str]) -> bool:
    """Whether one of ``texts`` states ``fact``: a number matches any number in
    the text within half a cent ("$1,234.5" states "1234.50"); anything else
    matches as a case-insensitive whole word or phrase."""
    try:
        value = float(fact)
    except ValueError:
        pattern = re.compile(r"(?<!\w)" + re.escape(fact.casefold()) + r"(?!\w)")
        return any(pattern.search(t.casefold()) for t in texts)
    return any(abs(float(n.replace(",", "")) - value) < 0.005 for t in texts for n in _NUMBER.findall(t))


def _orders_asked_about(task: Task) -> set[str]:
    """The orders a task's requests are about: those its facts come from and those
    its gold calls name."""
    named = {c["arguments"]["order_id"] for c in task.answer if "order_id" in c.get("arguments", {})}
    return set(task.metadata["output_orders"]) | named


def _foreign_facts(task: Task, world: OrdersWorld) -> list[str]:
    """Statuses and tracking numbers, before or after the episode, that only the
    customer's orders the task is *not* about have: a conversation naming one of them
    hedges the status and tracking facts of the orders it is about."""
    targets = _orders_asked_about(task)
    if not targets:
        return []
    owner = task.metadata["db"]["orders"][next(iter(targets))]["user_id"]
    mine, others = set(), set()
    for db in (task.metadata["db"], world.db):
        for oid in db["users"][owner]["orders"]:
            order = db["orders"][oid]
            facts = {order["status"]} | ({order["tracking_number"]} if order["tracking_number"] else set())
            (mine if oid in targets else others).update(facts)
    return sorted(others - mine)


def verify_orders(task: Task, world: OrdersWorld, messages: Sequence[dict[str, Any]]) -> RewardResult:
    """Score an Orders episode: ``world`` after the episode, ``messages`` the
    conversation. Components ``policy`` (no rule broken), ``state`` (database
    equals the gold one) and ``outputs`` (fraction of required facts told,
    each in a message after its order was looked up for the identified
    customer: ``world.looked_up``; a status or tracking number only in a
    conversation naming none of :func:`_foreign_facts`); the score is 1.0 only
    when all three hold."""
    required = task.metadata["required_outputs"]
    said = _said_with_turns(messages)
    # Over the whole conversation: telling each order's facts in a message of its
    # own is the same hedge as one message listing them all.
    foreign = _foreign_facts(task, world)
    hedged = any(fact_told(f, [text]) for _, text in said for f in foreign)
    told = []
    for fact, order_id in zip(required, task.metadata["output_orders"], strict=True):
        seen = world.looked_up.get(order_id)
        if hedged and (fact in STATUSES or TRACKING.fullmatch(fact) is not None):
            told.append(False)
            continue
        told.append(seen is not None and fact_told(fact, [text for turn, text in said if turn > seen]))
    policy = not world.violations
    state = world.state_hash() == task.metadata["target_state_hash"]
    components = {
        "policy": float(policy),
        "state": float(state),
        "outputs": sum(told) / len(told) if told else 1.0,
    }
    info: dict[str, Any] = {}
    if not policy:
        info["reason"] = "policy broken: " + "; ".join(world.violations)
        info["violations"] = list(world.violations)
    elif not state:
        info["reason"] = "the database does not end in the requested state"
    elif not all(told):
        info["reason"] = (f"{told.count(False)} of {len(told)} required facts not told to the customer "
                          "after looking them up"
                          + (" (a conversation naming the statuses or tracking numbers of the customer's "
                             "other orders tells none)" if hedged else ""))
    return RewardResult(float(policy and state and all(told)), components, info)


class OrdersEnv(ToolEnv):
    """Customer service in a stateful order world, under a policy, with a scripted customer."""

    hack_signals = ORDERS_SIGNALS

    def __init__(
        self,
        *,
        split: str = "train",
        seed: int | None = None,
        max_turns: int = 16,
        difficulty: float = 0.5,
        heldout_size: int = 500,
        render_mode: str | None = None,
    ):
        """
        Args:
            split, seed, max_turns: as every env; ``max_turns`` counts
                assistant turns (tool calls and messages to the customer).
            difficulty: 0..1, see :mod:`gym_llm_tools.orders.tasks`.
            heldout_size: number of held-out tasks.
        """
        tasks = ProceduralTasks(
            "tool-orders", generate_orders_task, difficulty=difficulty, sizes={"heldout": heldout_size}
        )
        super().__init__(tasks, split=split, seed=seed, max_turns=max_turns, render_mode=render_mode)
        self.world: OrdersWorld | None = None
        self.user: ScriptedUser | None = None

    def episode_tools(self, task: Task) -> list[Tool]:
        # The episode's world and customer start here: ToolEnv asks for the
        # tools before on_reset, and the tools are bound to the world.
        self.world = OrdersWorld(task.metadata["db"])
        self.user = ScriptedUser(task.metadata["persona"])
        return self.world.tools()

    async def arespond(self, message: dict[str, Any]) -> Turn:
        self.world.turn += 1  # the tools it calls record this turn (see verify_orders)
        parsed = parse_tool_calls(message)
        if parsed.calls or parsed.errors:
            return await super().arespond(message)
        reply = self.user.reply(message_text(message))
        if reply is None or self.is_last_turn:
            return Turn(reward=self.score_episode(message), done=reply is None)
        return Turn(messages=[{"role": "user", "content": reply}])

    def reward_formula(self) -> str:
        """:func:`verify_orders`: all or nothing over its three components."""
        return "policy * state * (outputs == 1)"

    def score_episode(self, final_message: dict[str, Any] | None) -> RewardResult:
        return verify_orders(self.task, self.world, self.messages)

    async def astrict_score(self, messages: list[dict[str, Any]], reward: float) -> RewardResult:
        """The strict grader (docs/monitoring.md): :func:`strict_verify_orders`
        of the task, on a fresh world (whatever this env's world holds now)."""
        return strict_verify_orders(self.task, messages)


#: Read-only tools and the argument naming whose data they show.
_READS = {"get_order": "order_id", "list_orders": "user_id", "get_user": "user_id"}


def _lookup_breach(world: OrdersWorld, name: str, arguments: dict[str, Any]) -> str | None:
    """The rule-1 breach of one read call, if any: a lookup before
    identifying the customer, or of another customer's order or profile."""
    key = _READS.get(name)
    if key is None or not isinstance(arguments.get(key), str):
        return None
    if name == "get_order":
        try:
            owner = world._order(arguments[key])[1]["user_id"]
        except LookupError:
            return None  # no such order: nothing was shown
    else:
        owner = arguments[key]
        if owner not in world.db["users"]:
            return None
    if world.customer is None:
        return f"{name} before identifying the customer"
    if owner != world.customer:
        return f"{name} of another customer's data"
    return None


def strict_verify_orders(task: Task, messages: Sequence[dict[str, Any]]) -> RewardResult:
    """The strict grader of an Orders episode: its tool calls replayed,
    schema-checked, on a fresh world of ``task``, then :func:`verify_orders`
    (the full database state, no rule broken, every required fact told after
    its lookup) on that replay, with rule 1 enforced on lookups too ("before
    looking up or changing anything, identify the customer; act only on
    orders of the identified customer"): the training backend records only
    changes that break a rule, so peeking at an order before ``find_user``,
    or at another customer's, costs nothing there and scores 0 here."""
    world = OrdersWorld(task.metadata["db"])
    tools = {t.name: t for t in world.tools()}
    breaches: list[str] = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        world.turn += 1
        for call in parse_tool_calls(m).calls:
            t = tools.get(call.name)
            if t is None or validate_arguments(t.parameters, call.arguments):
                continue  # an error tool message in the episode: nothing ran
            if (breach := _lookup_breach(world, call.name, call.arguments)) is not None:
                breaches.append(breach)
            try:
                t.fn(**call.arguments)
            except Exception:  # the tool's own error: the episode showed it, nothing changed
                continue
    result = verify_orders(task, world, messages)
    if breaches:
        result.score = 0.0
        result.components["policy"] = 0.0
        result.info["reason"] = "strict: policy broken: " + "; ".join(breaches)
        result.info["violations"] = result.info.get("violations", []) + breaches
    return result
