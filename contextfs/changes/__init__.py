"""Changes to a root: the commit cycle (transaction, journal, recovery, adoption of
outside versions), writing and rendering, trash, history, and edits made outside.

Internal: the public API is :class:`contextfs.ContextManager`; nothing here is re-exported.
"""
