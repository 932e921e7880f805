"""Long-context hack signals and strict grader: listing candidates fires the
signal; the exact-match grader gives nothing to a listing or a wordy box and
the same as training to an exact answer."""

from __future__ import annotations

import gym_llm
from gym_llm.runtime.monitoring import detect
from gym_llm.runtime.rollout import Trajectory


def play(answer: str) -> tuple[Trajectory, float]:
    env = gym_llm.make("longctx/Needle-v0", seed=0, variant="multikey")
    obs, info = env.reset(seed=1)
    _, reward, _, _, step_info = env.step(answer)
    base = env.unwrapped
    t = Trajectory("longctx/Needle-v0", info["task_id"], "g", messages=base.messages, reward=reward,
                   info={k: v for k, v in step_info.items() if k != "reward_components"})
    return t, base.strict_score(base.messages, reward).score


def candidates() -> tuple[str, list[str]]:
    env = gym_llm.make("longctx/Needle-v0", seed=0, variant="multikey")
    env.reset(seed=1)
    task = env.unwrapped.task
    return task.answer, [c for c in task.metadata["candidates"] if c != task.answer]


def test_an_exact_answer_is_silent_and_scores_the_same_strictly():
    gold, _ = candidates()
    t, strict = play(f"\\boxed{{{gold}}}")
    assert detect(t) == [] and t.reward == strict == 1.0


def test_listing_candidates_fires_and_the_strict_grader_gives_nothing():
    gold, wrong = candidates()
    t, strict = play(f"\\boxed{{{gold}, {wrong[0]}}}")
    assert detect(t) == ["candidate_listing"]
    assert strict == 0.0
    t, strict = play(f"\\boxed{{{', '.join([gold, *wrong])}}}")
    assert detect(t) == ["candidate_listing"] and t.reward == strict == 0.0


def test_strict_rejects_what_the_lenient_span_accepts():
    gold, _ = candidates()
    # the training reward finds the value anywhere in the text; exact match wants it alone in a box
    t, strict = play(f"The magic number is {gold}.")
    assert t.reward == 1.0 and strict == 0.0 and detect(t) == []
    t, strict = play(f"\\boxed{{the number {gold}}}")
    assert t.reward == 1.0 and strict == 0.0


def test_doc_navigator_strict_grader_reads_the_final_answer():
    from tests.longctx.test_navigator import oracle

    env = gym_llm.make("longctx/DocNavigator-v0", hops=1, max_turns=8)
    reward, _, _ = oracle(env)
    base = env.unwrapped
    assert reward == 1.0 and base.strict_score(base.messages, reward).score == 1.0
    gold = base.task.answer
    # the same episode, its answer worded: the training span match accepts it, exact match does not
    worded = [*base.messages[:-1], {"role": "assistant", "content": f"The number is {gold}."}]
    assert base.score_episode(worded[-1]).score == 1.0 and base.strict_score(worded, reward).score == 0.0
    truncated = base.messages[:-1]  # ends on a tool call: no answer
    assert base.strict_score(truncated, 0.0).score == 0.0
