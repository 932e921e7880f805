"""A minimal third-party plugin: one procedural environment, registered through
the ``gym_llm`` entry point, exactly as a user's own package would do it."""
