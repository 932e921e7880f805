"""The order-management world: a JSON database and the tools that read and
change it, with the store's policy checked on every change.

The backend (the tools) is more permissive than the policy, as real back
offices are: it will cancel a shipped order if asked. Each change that breaks
a rule of :data:`POLICY` is still made, and recorded in
:attr:`OrdersWorld.violations`; the environment scores such an episode 0.

Money is stored in integer cents (state hashes must not depend on float
rounding) and shown to the model in dollars.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Literal

from gym_llm.envs.tasks import content_hash
from gym_llm.envs.tools import Tool, function_schema

__all__ = ["OrdersWorld", "POLICY", "CANCEL_REASONS", "empty_db", "money"]

CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS: tuple[str, ...] = CancelReason.__args__

POLICY = """\
You are a customer-service agent of an online store. Help the customer using the tools, following these rules:
1. Before looking up or changing anything, identify the customer: ask for their email address if they have not given it, and call find_user. Act only on orders of the identified customer.
2. Only pending orders can be cancelled. The cancellation reason must be the customer's: "no longer needed" or "ordered by mistake".
3. The shipping address can be changed only for pending orders.
4. Items can be returned only from delivered orders.
5. If the customer asks for something these tools cannot do (a refund other than by cancellation or return, a price match, a complaint), call transfer_to_human with a short summary.
6. When a request breaks these rules, do not make the change: tell the customer why, naming the order's status.
7. Tell the customer the outcome: the refund amount after a cancellation or a return; the status, and the tracking number if there is one, when they ask about an order.
Ask the customer when you need information. When you are done, reply without a tool call."""


def money(cents: int) -> float:
    """Cents as dollars, the unit tools and the customer see."""
    return round(cents / 100, 2)


def empty_db() -> dict[str, Any]:
    """A database with no users or orders."""
    return {"users": {}, "orders": {}, "transfers": 0}


#: Every status an order can have.
STATUSES = ("pending", "processed", "shipped", "delivered", "cancelled", "return requested")


class OrdersWorld:
    """One episode's database and its tools. ``db`` is copied, never mutated.

    ``db``: ``{"users": {user_id: {name, email, address, orders}},
    "orders": {order_id: {user_id, status, items: [{item_id, product,
    price_cents, returned}], address, tracking_number, cancel_reason,
    refund_cents}}, "transfers": int}``; an order's status is pending,
    processed, shipped, delivered, cancelled or (after a return) return requested.
    """

    TOOL_NAMES = ("find_user", "get_user", "list_orders", "get_order", "cancel_order",
                  "modify_address", "return_items", "transfer_to_human")

    def __init__(self, db: dict[str, Any]):
        self.db = _copy(db)
        self.customer: str | None = None
        self.violations: list[str] = []
        #: The assistant turn being played (the environment counts them); 0
        #: for calls made outside an episode (replaying gold actions).
        self.turn = 0
        #: Order id -> the turn in which its details (status, refund) were
        #: first shown for the identified customer: a fact about an order
        #: counts as told only in a later message (see ``verify_orders``).
        self.looked_up: dict[str, int] = {}

    def state_hash(self) -> str:
        """Canonical hash of the database (who was identified is not state)."""
        return content_hash(self.db)

    def tools(self) -> list[Tool]:
        """The tools, bound to this world."""
        return [Tool(s["name"], s["description"], s["parameters"], getattr(self, s["name"]))
                for s in json.loads(_schemas())]

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``name`` directly (replaying gold actions)."""
        if name not in self.TOOL_NAMES:
            raise KeyError(name)
        return getattr(self, name)(**arguments)

    # ------------------------------------------------------------ internals
    def _order(self, order_id: str) -> tuple[str, dict[str, Any]]:
        """``(canonical id, order)``; the leading ``#`` is optional."""
        oid = order_id.strip()
        oid = oid if oid.startswith("#") else "#" + oid
        if oid not in self.db["orders"]:
            raise LookupError(f"no order {order_id!r}")
        return oid, self.db["orders"][oid]

    def _shown(self, order_id: str) -> None:
        """Record that ``order_id``'s details reached the agent, if it is an
        order of the identified customer (facts of anyone else's order, or
        looked up before identifying anyone, justify nothing)."""
        if self.customer is not None and self.db["orders"][order_id]["user_id"] == self.customer:
            self.looked_up.setdefault(order_id, self.turn)

    def _check(self, order: dict[str, Any], action: str, allowed_status: str) -> None:
        """Record the rules ``action`` on ``order`` breaks (the change goes ahead)."""
        if self.customer is None:
            self.violations.append(f"{action} before identifying the customer")
        elif order["user_id"] != self.customer:
            self.violations.append(f"{action} on another customer's order")
        if order["status"] != allowed_status:
            self.violations.append(f"{action} on a {order['status']} order")

    # ------------------------------------------------------------------ tools
    def find_user(self, email: str) -> str:
        """Find a customer by email address and identify them for this conversation.

        Args:
            email: The customer's email address.

        Returns the customer's user id.
        """
        wanted = email.strip().lower()
        for user_id, user in self.db["users"].items():
            if user["email"] == wanted:
                self.customer = user_id
                return user_id
        raise LookupError(f"no customer with email {email!r}")

    def get_user(self, user_id: str) -> dict[str, Any]:
        """A customer's profile: name, email, default address and order ids.

        Args:
            user_id: The customer's user id.
        """
        if user_id not in self.db["users"]:
            raise LookupError(f"no user {user_id!r}")
        return {"user_id": user_id, **_copy(self.db["users"][user_id])}

    def list_orders(self, user_id: str) -> list[dict[str, Any]]:
        """A customer's orders, each with its status and product names.

        Args:
            user_id: The customer's user id.
        """
        if user_id not in self.db["users"]:
            raise LookupError(f"no user {user_id!r}")
        for oid in self.db["users"][user_id]["orders"]:
            self._shown(oid)
        return [
            {"order_id": oid, "status": self.db["orders"][oid]["status"],
             "products": [i["product"] for i in self.db["orders"][oid]["items"]]}
            for oid in self.db["users"][user_id]["orders"]
        ]

    def get_order(self, order_id: str) -> dict[str, Any]:
        """Details of an order: status, items (with item ids and prices), total,
        shipping address, tracking number, refunds.

        Args:
            order_id: The order id, e.g. "#W1234567".
        """
        oid, o = self._order(order_id)
        self._shown(oid)
        return {
            "order_id": oid,
            "user_id": o["user_id"],
            "status": o["status"],
            "items": [{"item_id": i["item_id"], "product": i["product"], "price": money(i["price_cents"]),
                       "returned": i["returned"]} for i in o["items"]],
            "total": money(sum(i["price_cents"] for i in o["items"])),
            "shipping_address": dict(o["address"]),
            "tracking_number": o["tracking_number"],
            "refunded": money(o["refund_cents"]),
        }

    def cancel_order(self, order_id: str, reason: CancelReason) -> dict[str, Any]:
        """Cancel an order and refund its items.

        Args:
            order_id: The order id.
            reason: Why the customer cancels.
        """
        oid, o = self._order(order_id)
        if o["status"] == "cancelled":
            raise ValueError("the order is already cancelled")
        self._check(o, "cancel_order", "pending")
        refund = sum(i["price_cents"] for i in o["items"] if not i["returned"])
        o.update(status="cancelled", cancel_reason=reason, refund_cents=o["refund_cents"] + refund)
        self._shown(oid)
        return {"order_id": oid, "status": "cancelled", "refund": money(refund)}

    def modify_address(self, order_id: str, street: str, city: str, zip_code: str) -> dict[str, Any]:
        """Change the shipping address of an order.

        Args:
            order_id: The order id.
            street: Street and number.
            city: City.
            zip_code: Postal code.
        """
        oid, o = self._order(order_id)
        if o["status"] in ("delivered", "cancelled", "return requested"):
            raise ValueError(f"the order is {o['status']}")
        self._check(o, "modify_address", "pending")
        o["address"] = {"street": " ".join(street.split()), "city": " ".join(city.split()),
                        "zip": zip_code.strip()}
        return {"order_id": oid, "shipping_address": dict(o["address"])}

    def return_items(self, order_id: str, item_ids: list[str]) -> dict[str, Any]:
        """Return items of an order and refund them.

        Args:
            order_id: The order id.
            item_ids: Ids of the items to return (see get_order).
        """
        oid, o = self._order(order_id)
        if o["status"] == "cancelled":
            raise ValueError("the order is cancelled")
        by_id = {i["item_id"]: i for i in o["items"]}
        if not item_ids or len(set(item_ids)) != len(item_ids):
            raise ValueError("item_ids must name each item once")
        unknown = [i for i in item_ids if i not in by_id]
        if unknown:
            raise LookupError(f"items not in this order: {unknown}")
        if any(by_id[i]["returned"] for i in item_ids):
            raise ValueError("an item was already returned")
        self._check(o, "return_items", "delivered")
        refund = sum(by_id[i]["price_cents"] for i in item_ids)
        for i in item_ids:
            by_id[i]["returned"] = True
        o.update(status="return requested", refund_cents=o["refund_cents"] + refund)
        self._shown(oid)
        return {"order_id": oid, "returned": list(item_ids), "refund": money(refund)}

    def transfer_to_human(self, summary: str) -> str:
        """Hand the conversation to a human agent.

        Args:
            summary: What the customer needs, in a sentence.
        """
        self.db["transfers"] += 1
        return "Transferred: a human agent will contact the customer."


def _copy(data: Any) -> Any:
    """A deep copy of JSON data (several times faster than copy.deepcopy)."""
    return json.loads(json.dumps(data))


@functools.cache
def _schemas() -> str:
    """The tools' OpenAI function objects, as JSON text (fresh copies are one json.loads away)."""
    world = OrdersWorld(empty_db())
    return json.dumps([function_schema(getattr(world, n))["function"] for n in OrdersWorld.TOOL_NAMES])
