"""How context improves itself after work: lessons, facts, summaries, compaction, cleanup."""
