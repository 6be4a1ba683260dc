"""A package's public names, each imported from its module on first use (PEP 562).

For packages whose modules are costly to import and which a short-lived process (one CLI
call) rarely needs in full: ``from contextfs.scopes import ScopedContext`` then imports
the view assembly only, not topics and memory. ``__all__`` stays the complete list.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``homes`` maps each name to its module.

    A module name starting with ``.`` is relative to ``package``. A name, once loaded, is
    set on the package, so later look-ups are plain attribute reads.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return __getattr__, __dir__
