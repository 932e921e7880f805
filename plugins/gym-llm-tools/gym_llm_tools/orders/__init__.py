"""``tool/Orders-v0``: the order world (:mod:`.world`), the scripted customer
(:mod:`.user`), task generation (:mod:`.tasks`) and the environment (:mod:`.env`)."""

from .env import OrdersEnv, strict_verify_orders, verify_orders
from .user import ScriptedUser
from .world import POLICY, OrdersWorld

__all__ = ["OrdersEnv", "OrdersWorld", "ScriptedUser", "POLICY", "verify_orders", "strict_verify_orders"]
