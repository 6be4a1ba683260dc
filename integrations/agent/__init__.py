"""The context engine behind the agent middleware: the conversation, the system message,
the counting rule, the settings and replay (see :mod:`contextfs.integrations.middleware`).
"""
