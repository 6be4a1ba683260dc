"""Review mode and sessions: the agent's branch (``branch``), the person's decisions,
an approval's merge, sessions as the unit of review and the commit log they read.

Internal: the ``contextfs sessions`` command and the review tools are the public face.
"""
