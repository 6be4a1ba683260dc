"""``.contextfs/config.toml``: committed settings, read at the edges and passed in.

Only reading lives here; layers that own a section (scopes, topics, memory) validate
their own part and raise ConfigError with the key that is wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_PATH", "load_config"]

CONFIG_PATH = ".contextfs/config.toml"


def load_config(root: Path) -> dict[str, Any]:
    """The parsed config file, or {} when the root has none."""
    path = root / CONFIG_PATH
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{CONFIG_PATH}: cannot read it ({exc}); make it a UTF-8 text file") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_PATH}: invalid TOML ({exc}); fix the file or delete it to use the defaults") from None
