import gym_llm


@gym_llm.hookimpl
def gym_llm_register(registry):
    registry.register(
        "example/Reverse-v0",
        "gym_llm_example.envs:ReverseEnv",
        description="Reverse a short word (third-party plugin example)",
        length=4,
    )
