"""The scopes layer's commands: ``contextfs context``, ``topic`` and ``memory``.

Each module defines one click command, loaded by name from :data:`contextfs.cli.COMMANDS`.
"""
