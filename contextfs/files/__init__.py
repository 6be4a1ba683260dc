"""The root's files: the path gate, confined I/O, walking without links, durability,
editor scratch files and derived state under ``.git/``.

Internal: the public API is :class:`contextfs.ContextManager`; nothing here is re-exported.
"""
