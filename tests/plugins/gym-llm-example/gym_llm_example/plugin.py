import gym_llm


@gym_llm.hookimpl
def gym_llm_register(registry):
    registry.register(
        "example/Reverse-v0",
        "gym_llm_example.envs:make_reverse",
        description="Reverse a short word (third-party plugin example)",
        length=4,
    )


@gym_llm.hookimpl
def gym_llm_hack_signals():
    """A third-party plugin's hack signal (docs/monitoring.md): the answer is
    the word as the prompt gave it, not reversed (a policy copying its prompt)."""
    import re

    from gym_llm.envs.parsing import message_text
    from gym_llm.runtime.monitoring import HackSignal, assistant_messages

    def unreversed(traj):
        prompt = " ".join(message_text(m) for m in traj.messages if m.get("role") == "user")
        word = re.search(r"Reverse the word '(\w+)'", prompt)
        turns = assistant_messages(traj)
        return bool(word and turns) and message_text(turns[-1]).strip() == word.group(1) != word.group(1)[::-1]

    return [HackSignal("unreversed", "example/Reverse-*", "the answer is the prompt's word, not reversed",
                       unreversed, threshold=0.2)]
