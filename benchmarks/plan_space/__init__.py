"""How far is the chosen plan from the best plan in its memo (``python -m benchmarks.plan_space``)."""
