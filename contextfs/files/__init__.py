"""The root's files: the path gate, confined I/O (folders opened step by step, writes
staged until a change's flush), walking without links, durability, editor scratch files
and derived state under ``.git/``.

Internal: the public API is :class:`contextfs.ContextManager`; nothing here is re-exported.
"""
