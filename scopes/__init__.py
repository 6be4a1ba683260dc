"""Which context an agent sees, and how much of it: scopes, budgets, topics, memory tiers."""
