"""Token exactness on SmolLM2's real chat template (plain ChatML with a
default system prompt, no tools branch): multi-turn trajectories with user
feedback and tool results keep the sampled ids and the loss mask exactly,
and decode to the template's rendering of the final conversation."""

from __future__ import annotations

import pytest

from gym_llm.runtime.chat import ChatFormat
from gym_llm.runtime.policies import HFPolicy, SamplingParams
from gym_llm.runtime.rollout import collect
from tests.rollout.test_token_exact import Recording, check_consistent, render


@pytest.fixture(scope="module")
def smollm2_policy(smollm2_model, smollm2_tokenizer):
    return HFPolicy(smollm2_model, smollm2_tokenizer, seed=0)


# AddTool passes a tool schema, which this template does not render (the
# model rarely calls the tool, so its episodes may be single-turn).
@pytest.mark.parametrize(("env_id", "multi_turn"), [
    ("modeltest/Echo-v0", True), ("modeltest/Observe-v0", True), ("modeltest/AddTool-v0", False)])
def test_trajectories_keep_sampled_ids_and_decode_to_the_template(smollm2_policy, env_id, multi_turn):
    rec = Recording(smollm2_policy)
    trajs = collect(rec, env_id, num_groups=2, group_size=2, seed=3,
                    sampling=SamplingParams(max_new_tokens=12, temperature=1.0))
    tok = smollm2_policy.tokenizer
    sampled_by_context = {}
    for prompt, gen in rec.generations:
        sampled_by_context.setdefault(tuple(prompt), []).append(gen.token_ids)
    for t in trajs:
        check_consistent(t)
        assert tok.decode(t.token_ids, skip_special_tokens=False) == render(tok, t)
        for start, end in t.turn_spans:
            context = tuple(t.prompt_token_ids + t.response_token_ids[:start])
            assert t.response_token_ids[start:end] in sampled_by_context[context]
    if multi_turn:
        assert any(t.num_turns > 1 for t in trajs), "no multi-turn trajectory: nothing between turns was checked"


def test_tool_results_render_as_tool_turns_between_policy_turns(smollm2_policy):
    """The template has no tool branch: tool messages are ChatML turns of
    role ``tool``, and only the policy's own tokens carry loss."""
    trajs = collect(smollm2_policy, "modeltest/Observe-v0", num_groups=2, seed=1,
                    sampling=SamplingParams(max_new_tokens=8))
    fmt = ChatFormat(smollm2_policy.tokenizer)
    for t in trajs:
        assert t.num_turns == 3
        for (_, end), (nxt, _) in zip(t.turn_spans[:-1], t.turn_spans[1:], strict=True):
            gap = fmt.decode(t.response_token_ids[end:nxt])
            assert "<|im_start|>tool\nlength=" in gap and gap.endswith("<|im_start|>assistant\n")
            assert set(t.loss_mask[end:nxt]) == {0}


def test_env_turn_markup_on_the_smollm2_template(smollm2_tokenizer):
    fmt = ChatFormat(smollm2_tokenizer)
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    tool_msgs = [{"role": "tool", "tool_call_id": "c1", "name": "probe", "content": "3"}]
    after_stop = fmt.decode(fmt.env_turn_ids(history, tool_msgs, None, "<|im_end|>"))
    assert after_stop == "\n<|im_start|>tool\n3<|im_end|>\n<|im_start|>assistant\n"
    after_length = fmt.decode(fmt.env_turn_ids(history, tool_msgs, None, None))
    assert after_length == "<|im_end|>" + after_stop
    assert fmt.decode(fmt.closing_ids(history, None, "<|im_end|>")) == "\n"
    prompt = fmt.decode(fmt.prompt_ids([{"role": "user", "content": "hi"}]))
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
