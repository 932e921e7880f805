"""gym-llm's test suite: a regular package, so ``tests.*`` imports resolve here even
where an installed distribution ships a top-level ``tests`` package (verl 0.9.1 does)."""
