"""The scripted customer: a deterministic user simulator that answers the
agent's questions from a persona.

It reads only the *asking* sentences of an agent message (those ending in
``?`` or phrased as a request: "please provide", "could you", "let me
know"), and answers, in this order of priority:

1. a request for confirmation ("shall I", "should I proceed", "is that
   correct") -> "Yes, please go ahead.";
2. questions about facts it knows (email, order, items, address, reason,
   name) -> those facts, in a fixed order;
3. "anything else?" -> it ends the conversation;
4. any other question -> it restates its request.

A message that asks nothing ends the conversation (it is the agent's final
message). The same persona and messages give the same replies in any process:
no randomness, no model.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ScriptedUser", "FIELDS"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_ASKING = re.compile(r"\?\s*$|\b(?:please (?:provide|tell|share|give|send|confirm)|could you|can you|let me know)\b")
_CONFIRM = re.compile(
    r"\b(?:shall i|should i|would you like me to|do you want me to|may i|"
    r"ok(?:ay)? to proceed|proceed\?|go ahead\?|is that (?:correct|right|ok(?:ay)?))"
)
_CLOSING = re.compile(r"\banything else\b|\bsomething else\b|\bfurther (?:help|assistance)\b")

#: The facts a persona can answer and how an agent asks for each (in reply order).
FIELDS: dict[str, re.Pattern[str]] = {
    "name": re.compile(r"\b(?:your|full) name\b"),
    "email": re.compile(r"\be-?mail\b"),
    "order": re.compile(r"\border (?:id|number|#)|\bwhich order\b|\bwhat order\b"),
    "items": re.compile(r"\bitems?\b|\bwhich (?:products?|things?)\b|\bwhat would you like to return\b"),
    "address": re.compile(r"(?<!mail )\baddress\b"),  # not "email address"
    "reason": re.compile(r"\breason\b|\bwhy\b"),
}


class ScriptedUser:
    """A customer with a ``persona``: ``{"request": str, "answers": {field: str}}``
    (``answers`` keyed by :data:`FIELDS` names; a field it lacks gets
    "I'm not sure.")."""

    def __init__(self, persona: dict[str, Any]):
        self.request: str = persona["request"]
        self.answers: dict[str, str] = dict(persona["answers"])

    def reply(self, agent_text: str) -> str | None:
        """The customer's answer to one agent message, or ``None`` when the
        customer ends the conversation."""
        asking = [s.lower() for s in _SENTENCE_END.split(agent_text or "") if _ASKING.search(s.lower())]
        if not asking:
            return None
        text = " ".join(asking)
        if _CONFIRM.search(text):
            return "Yes, please go ahead."
        asked = [f for f, pattern in FIELDS.items() if pattern.search(text)]
        if asked:
            return " ".join(self.answers.get(f, "I'm not sure.") for f in asked)
        if _CLOSING.search(text):
            return None
        return f"Sorry, I'm not sure what you mean. {self.request}"
