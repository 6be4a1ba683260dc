"""Anthropic's client-side memory tool on a context folder: the adapter and its path rules.

:class:`~contextfs.integrations.MemoryToolAdapter` is the public name.
"""
