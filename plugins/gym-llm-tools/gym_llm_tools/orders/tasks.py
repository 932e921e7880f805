"""Procedural tasks of ``tool/Orders-v0``: a small world, a customer with a
request, the gold actions and the facts the agent must tell.

Kinds of request (the order named by id, or at higher difficulty by a product
in it, which needs ``list_orders``):

* ``status``: status (and tracking number) of an order -- read only, must tell;
* ``cancel``: cancel a pending order for a reason -- must tell the refund;
* ``address``: new shipping address for a pending order;
* ``return``: return some items of a delivered order -- must tell the refund;
* ``refuse_cancel`` / ``refuse_return``: the same requests on an order whose
  status forbids them -- no change; must tell the status;
* ``transfer``: something the tools cannot do -- ``transfer_to_human``.

``difficulty`` (0..1): at 0 only ``status`` and ``cancel``, with every fact in
the first message; higher, the customer withholds facts until asked, refers
to orders by product, and the refusal and transfer kinds appear; above 0.7
some customers bring two requests.
"""

from __future__ import annotations

import random
import re
from typing import Any

from gym_llm import Draft
from gym_llm.envs.tools import render_tools_prompt

from .world import CANCEL_REASONS, POLICY, OrdersWorld, empty_db, money

__all__ = ["generate_orders_task", "KINDS"]

KINDS = ("status", "cancel", "address", "return", "refuse_cancel", "refuse_return", "transfer")

FIRST = ["Maria", "James", "Aisha", "Chen", "Lucas", "Fatima", "Noah", "Yuki", "Olga", "Ravi",
         "Emma", "Kwame", "Sofia", "Ivan", "Leila", "Diego", "Hannah", "Tomas", "Amara", "Ben"]
LAST = ["Lopez", "Smith", "Khan", "Wang", "Silva", "Okafor", "Brown", "Tanaka", "Petrova", "Patel",
        "Muller", "Mensah", "Rossi", "Novak", "Haddad", "Garcia", "Cohen", "Berg", "Diallo", "Kim"]
STREETS = ["Oak Street", "Maple Avenue", "Cedar Lane", "Harbor Road", "Hill Street", "Park Place",
           "Lake Drive", "Mill Road", "River Street", "Elm Court"]
CITIES = [("Springfield", "62704"), ("Riverton", "82501"), ("Fairview", "37062"), ("Georgetown", "78626"),
          ("Salem", "97301"), ("Madison", "53703"), ("Clinton", "61727"), ("Franklin", "37064")]
PRODUCTS = [("desk lamp", 3499), ("water bottle", 1899), ("yoga mat", 2999), ("coffee grinder", 5450),
            ("wireless mouse", 2599), ("backpack", 6200), ("electric kettle", 3999), ("bath towel set", 4400),
            ("phone case", 1500), ("running shoes", 8999), ("bluetooth speaker", 5999), ("notebook pack", 1250),
            ("chef's knife", 4795), ("throw pillow", 2250), ("hiking socks", 1399), ("wall clock", 2899),
            ("sunglasses", 7450), ("toaster", 3350), ("plant pot", 1675), ("laptop stand", 3925),
            ("scented candle", 1150), ("rain jacket", 9900), ("board game", 3199), ("headphones", 12900),
            ("cutting board", 2480), ("picture frame", 1725), ("tea sampler", 2150), ("bike light", 2675)]
REASON_TEXT = {"no longer needed": "I don't need it anymore", "ordered by mistake": "I ordered it by mistake"}
OUT_OF_SCOPE = [
    "I was charged twice for {ref} and I want the duplicate charge refunded.",
    "I saw the same things cheaper elsewhere; I want a price match on {ref}.",
    "The courier was very rude when delivering {ref}, and I want to file a complaint.",
]
#: Statuses that make a request impossible under the policy.
_REFUSED = {"refuse_cancel": ("processed", "shipped", "delivered"),
            "refuse_return": ("pending", "processed", "shipped")}
_NEEDS = {"status": ("pending", "processed", "shipped", "delivered"), "cancel": ("pending",),
          "address": ("pending",), "return": ("delivered",), "transfer": ("shipped", "delivered"), **_REFUSED}


def _address(rng: random.Random) -> dict[str, str]:
    city, zip_code = rng.choice(CITIES)
    return {"street": f"{rng.randrange(1, 999)} {rng.choice(STREETS)}", "city": city, "zip": zip_code}


def _fmt_address(a: dict[str, str]) -> str:
    return f"{a['street']}, {a['city']}, {a['zip']}"


#: A tracking number, as :func:`_tracking` makes them.
TRACKING = re.compile(r"TRK\d{9}")


def _tracking(rng: random.Random) -> str:
    return "TRK" + "".join(rng.choice("0123456789") for _ in range(9))


def _world(rng: random.Random, n_users: int = 4) -> dict[str, Any]:
    """A random database; user 0 is the customer. Within one user every
    product appears in at most one order, so "the order with the X" is unique."""
    db = empty_db()
    names = rng.sample([(f, s) for f in FIRST for s in LAST], n_users)
    for first, last in names:
        user_id = f"{first.lower()}_{last.lower()}_{rng.randrange(1000, 10000)}"
        email = f"{first.lower()}.{last.lower()}{rng.randrange(10, 100)}@example.com"
        address = _address(rng)
        products = rng.sample(PRODUCTS, 12)
        orders = []
        for _ in range(rng.randrange(2, 5)):
            status = rng.choice(("pending", "processed", "shipped", "delivered", "delivered", "cancelled"))
            order_id = f"#W{rng.randrange(10**6, 10**7)}"
            items = [{"item_id": str(rng.randrange(10**9, 10**10)), "product": name, "price_cents": price,
                      "returned": False} for name, price in (products.pop() for _ in range(rng.randrange(1, 4)))]
            db["orders"][order_id] = {
                "user_id": user_id, "status": status, "items": items, "address": dict(address),
                "tracking_number": _tracking(rng) if status in ("shipped", "delivered") else None,
                "cancel_reason": rng.choice(CANCEL_REASONS) if status == "cancelled" else None,
                "refund_cents": sum(i["price_cents"] for i in items) if status == "cancelled" else 0,
            }
            orders.append(order_id)
        db["users"][user_id] = {"name": f"{first} {last}", "email": email, "address": address, "orders": orders}
    return db


def _set_status(rng: random.Random, order: dict[str, Any], status: str) -> None:
    order["status"] = status
    order["tracking_number"] = _tracking(rng) if status in ("shipped", "delivered") else None
    order["cancel_reason"], order["refund_cents"] = None, 0


def _items_text(products: list[str]) -> str:
    names = [f"the {p}" for p in products]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _request(kind: str, rng: random.Random, world: dict[str, Any], order_id: str, ref: str,
             upfront: bool) -> tuple[str, list[dict[str, Any]], list[str], dict[str, str]]:
    """One request on ``order_id``: (sentence, gold calls, required outputs, answers)."""
    order = world["orders"][order_id]
    if kind == "status":
        required = [order["status"]] + ([order["tracking_number"]] if order["tracking_number"] else [])
        return (f"What is the status of {ref}?", [_call("get_order", order_id=order_id)], required, {})
    if kind in ("cancel", "refuse_cancel"):
        reason = rng.choice(CANCEL_REASONS)
        text = f"I'd like to cancel {ref}" + (f" because {REASON_TEXT[reason]}." if upfront else ".")
        answers = {"reason": REASON_TEXT[reason] + "."}
        if kind == "refuse_cancel":
            return text, [_call("get_order", order_id=order_id)], [order["status"]], answers
        refund = f"{money(sum(i['price_cents'] for i in order['items'])):.2f}"
        return text, [_call("cancel_order", order_id=order_id, reason=reason)], [refund], answers
    if kind == "address":
        new = _address(rng)
        text = f"Please ship {ref} to a new address" + (f": {_fmt_address(new)}." if upfront else ".")
        gold = _call("modify_address", order_id=order_id, street=new["street"], city=new["city"], zip_code=new["zip"])
        return text, [gold], [], {"address": f"The new address is {_fmt_address(new)}."}
    if kind in ("return", "refuse_return"):
        items = rng.sample(order["items"], rng.randrange(1, len(order["items"]) + 1))
        what = _items_text([i["product"] for i in items])
        text = f"I want to return {what} from {ref}." if upfront else f"I want to return something from {ref}."
        answers = {"items": f"{what[0].upper()}{what[1:]}."}
        if kind == "refuse_return":
            return text, [_call("get_order", order_id=order_id)], [order["status"]], answers
        refund = f"{money(sum(i['price_cents'] for i in items)):.2f}"
        gold = [_call("get_order", order_id=order_id),
                _call("return_items", order_id=order_id, item_ids=[i["item_id"] for i in items])]
        return text, gold, [refund], answers
    if kind == "transfer":
        text = rng.choice(OUT_OF_SCOPE).format(ref=ref)
        return text, [_call("transfer_to_human", summary=text)], [], {}
    raise ValueError(f"unknown kind {kind!r}")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _kind_weights(difficulty: float) -> dict[str, float]:
    if difficulty == 0:
        return {"status": 1.0, "cancel": 1.0}
    return {"status": 1.0, "cancel": 1.0, "address": 1.0, "return": 1.0,
            "refuse_cancel": difficulty, "refuse_return": difficulty, "transfer": 0.6 * difficulty}


def generate_orders_task(rng: random.Random, difficulty: float) -> Draft:
    """One Orders task (a :class:`~gym_llm.Draft`): prompt (policy + tools +
    the customer's first message), gold calls, and ``metadata`` with ``db``
    (the initial database), ``persona`` (for the scripted user),
    ``required_outputs``, ``output_orders`` (for each required output, the
    order whose looked-up details it comes from), ``kinds`` and
    ``target_state_hash``."""
    ticket = f"T-{rng.getrandbits(40):010X}"  # tells apart tasks whose first messages coincide
    db = _world(rng)
    user_id = next(iter(db["users"]))
    user = db["users"][user_id]
    weights = _kind_weights(difficulty)
    n_requests = 2 if rng.random() < max(0.0, difficulty - 0.7) * 1.5 else 1
    kinds = rng.choices(list(weights), list(weights.values()), k=n_requests)
    targets = rng.sample(user["orders"], n_requests)  # n_requests <= 2 <= orders per user
    withhold = rng.random() < difficulty
    by_product = n_requests == 1 and rng.random() < max(0.0, difficulty - 0.25)
    sentences, gold, required, order_answers = [], [_call("find_user", email=user["email"])], [], []
    output_orders: list[str] = []
    answers = {"name": f"My name is {user['name']}.", "email": f"My email is {user['email']}."}
    for kind, order_id in zip(kinds, targets, strict=True):
        order = db["orders"][order_id]
        if order["status"] not in _NEEDS[kind]:
            _set_status(rng, order, rng.choice(_NEEDS[kind]))
        if by_product:
            product = rng.choice(order["items"])["product"]
            # a return names its items, which already single out the order
            ref = "one of my orders" if kind in ("return", "refuse_return") else f"my order with the {product}"
            order_answers.append(f"I don't have the order number, but it's the one with the {product}.")
            gold.append(_call("list_orders", user_id=user_id))
        else:
            ref = f"order {order_id}"
            order_answers.append(f"It's order {order_id}.")
        sentence, calls, facts, extra = _request(kind, rng, db, order_id, ref, upfront=not withhold or n_requests > 1)
        sentences.append(sentence)
        gold += calls
        required += facts
        output_orders += [order_id] * len(facts)
        answers.update(extra)
    answers["order"] = " ".join(order_answers)
    identity = f"Hi, I'm {user['name']}." + ("" if withhold else f" My email is {user['email']}.")
    opening = f"{identity} {' Also, '.join(sentences)}"
    replay = OrdersWorld(db)
    for call in gold:
        replay.call(call["name"], call["arguments"])
    if replay.violations:  # a generator bug, never the model's fault
        raise AssertionError(f"gold actions break the policy: {replay.violations}")
    tools = [t.schema for t in replay.tools()]
    system = f"{POLICY}\n\n{render_tools_prompt(tools)}\n\nSupport ticket {ticket}."
    metadata = {
        "db": db,
        "persona": {"request": " ".join(sentences), "answers": answers},
        "required_outputs": required,
        "output_orders": output_orders,
        "kinds": kinds,
        "target_state_hash": replay.state_hash(),
    }
    return Draft([{"role": "system", "content": system}, {"role": "user", "content": opening}], gold, metadata)
