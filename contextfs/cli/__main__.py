"""``python -m contextfs.cli``: the ``contextfs`` console script, for a process that has no script on its path."""

from __future__ import annotations

import sys

from . import main

if __name__ == "__main__":
    main(sys.argv[1:])
