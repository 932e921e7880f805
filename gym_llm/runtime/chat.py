"""Token accounting for multi-turn trajectories with a chat template.

The prompt is rendered once (``add_generation_prompt=True``) and encoded. From
then on ids are only ever appended, never re-tokenized:

* a policy turn appends exactly the ids the policy sampled (stop token
  included);
* an environment turn appends the ids of the template's rendering of the new
  messages, *including* the closing markup of the assistant turn that the
  policy did not generate (``"\\n"`` after ``<|im_end|>`` in ChatML, or the
  whole ``<|im_end|>\\n`` when the turn hit ``max_new_tokens``) and the next
  generation prompt.

How the environment turn's text is found (the method): render the real
conversation so far with the assistant turn replaced by a unique sentinel
string, followed by the new messages, with the generation prompt. The text
after the sentinel is everything the template puts between the assistant's
content and the next assistant turn. If the policy stopped on a token whose
text starts that suffix (the template's end-of-turn token), that part was
already generated and is dropped; the rest is encoded and appended with loss
mask 0. Because only the suffix after the assistant's content is used, the
way a template renders *earlier* assistant turns never matters: templates
that render a final and a non-final assistant turn differently (Qwen3 drops
``<think>`` from earlier turns; others add or omit EOS) are handled, and the
ids of earlier turns stay what was sampled. When the episode ends, the
closing markup of the last assistant turn is found the same way from the
rendering without a generation prompt (ChatML: the ``"\\n"`` after
``<|im_end|>``).

Consequence, checked by the tests: for a template that renders assistant
content verbatim, ``decode(prompt_ids + response_ids)`` equals the template's
rendering of the final conversation. A template that rewrites assistant
content (trimming, dropping reasoning) renders differently from what was
sampled; the ids are still what the policy saw and produced, which is what
RL needs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ChatFormat", "SENTINEL"]

#: Stands in for the assistant's content when locating template markup; no
#: tokenizer normalises it away and no template trims inside it.
SENTINEL = "GYMLLMSENTINELa83f1c"


class ChatFormat:
    """Renders and encodes conversations for one tokenizer and its chat
    template. ``template_kwargs`` are passed to ``apply_chat_template``
    (e.g. ``{"enable_thinking": False}``)."""

    def __init__(self, tokenizer: Any, template_kwargs: dict[str, Any] | None = None):
        if getattr(tokenizer, "chat_template", None) is None:
            raise ValueError("the tokenizer has no chat template")
        self.tokenizer = tokenizer
        self.template_kwargs = dict(template_kwargs or {})

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
               add_generation_prompt: bool) -> str:
        """The template's text for ``messages`` (``content: None`` renders as
        ``""``: templates that concatenate content, SmolLM2's among them, would
        raise on it; those that test ``if message.content`` see no difference)."""
        messages = [{**m, "content": ""} if m.get("content") is None else m for m in messages]
        return self.tokenizer.apply_chat_template(
            messages, tools=tools or None, add_generation_prompt=add_generation_prompt,
            tokenize=False, **self.template_kwargs,
        )

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` with no BOS/EOS added (the template writes its own)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def prompt_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[int]:
        """The prompt's ids: the rendering with the generation prompt."""
        return self.encode(self.render(messages, tools, add_generation_prompt=True))

    # ------------------------------------------------------------------
    def _after_assistant(self, history: list[dict[str, Any]], new: list[dict[str, Any]],
                         tools: list[dict[str, Any]] | None, add_generation_prompt: bool) -> str:
        """Template text after the content of the last assistant message of
        ``history``, followed by ``new`` messages."""
        probe = [*history[:-1], {"role": "assistant", "content": SENTINEL}, *new]
        text = self.render(probe, tools, add_generation_prompt)
        at = text.rfind(SENTINEL)
        if at < 0:
            raise ValueError("the chat template dropped the assistant's content; cannot locate turn markup")
        return text[at + len(SENTINEL):]

    def _strip_generated(self, suffix: str, generated_stop: str | None) -> str:
        if generated_stop and suffix.startswith(generated_stop):
            return suffix[len(generated_stop):]
        return suffix

    def stop_text(self, token_ids: list[int], finish_reason: str) -> str | None:
        """Text of the stop token that ended a turn (``None`` when the turn hit
        its length limit)."""
        if finish_reason != "stop" or not token_ids:
            return None
        return self.decode(token_ids[-1:])

    def assistant_message(self, token_ids: list[int], finish_reason: str,
                          history: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The assistant message of a sampled turn: its decoded text, minus the
        template's end-of-turn text when the turn stopped on it (any other
        stop token stays in the content, so the rendering still matches the
        ids)."""
        text = self.decode(token_ids)
        stop = self.stop_text(token_ids, finish_reason)
        if stop and text.endswith(stop):
            closing = self._after_assistant([*history, {"role": "assistant", "content": ""}], [], tools, False)
            if closing.startswith(stop):
                text = text[: len(text) - len(stop)]
        return {"role": "assistant", "content": text}

    def env_turn_ids(self, history: list[dict[str, Any]], new_messages: list[dict[str, Any]],
                     tools: list[dict[str, Any]] | None, generated_stop: str | None) -> list[int]:
        """Ids to append after a policy turn for the environment's
        ``new_messages``: the rest of the assistant turn's closing markup, the
        new messages and the next generation prompt. ``history`` ends with the
        assistant message of that turn; ``generated_stop`` is
        :meth:`stop_text` of the turn."""
        suffix = self._after_assistant(history, new_messages, tools, add_generation_prompt=True)
        return self.encode(self._strip_generated(suffix, generated_stop))

    def closing_ids(self, history: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                    generated_stop: str | None) -> list[int]:
        """Ids that close the final assistant turn as the template renders a
        finished conversation (ChatML: ``"\\n"`` after ``<|im_end|>``)."""
        suffix = self._after_assistant(history, [], tools, add_generation_prompt=False)
        return self.encode(self._strip_generated(suffix, generated_stop))
