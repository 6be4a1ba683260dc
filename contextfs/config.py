"""``.contextfs/config.toml``: committed settings, read at the edges and passed in.

Reading lives here, and so does the list of tables the file may hold: a misspelled table
(``[sopes]``) is a ConfigError that names the closest known one, never silently ignored.
Each layer validates its own table's keys and values with :func:`check_keys` (an unknown
key such as ``core_limt`` is refused the same way) and raises ConfigError naming the key.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError, ContextFSError, InvalidPathError
from .files import RootFiles

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_PATH", "TABLES", "check_keys", "load_config"]

CONFIG_PATH = ".contextfs/config.toml"
#: Every table the file may hold, and the layer that reads it.
TABLES = {
    "scopes": "scoped views (contextfs.scopes)",
    "topics": "topics (contextfs.scopes.topics)",
    "compaction": "topic compaction (contextfs.evolve)",
    "memory": "memory tiers and the poisoning policy",
    "secrets": "the secret scanner of the write gate",
    "evolve": "the evolving agent's cleanup",
    "review": "review mode: whose writes wait for a person (contextfs.review_branch)",
}


def _unknown(what: str, kind: str, name: str, known: Iterable[str]) -> ConfigError:
    choices = sorted(known)
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return ConfigError(f"{CONFIG_PATH}: {what} is not a known {kind}; {hint}use one of {', '.join(choices)}")


def check_keys(table: str, section: Mapping[str, Any], known: Iterable[str]) -> None:
    """Refuse a key of ``[table]`` that is not in ``known`` (ConfigError naming it)."""
    known = set(known)
    for key in section:
        if key not in known:
            raise _unknown(f"[{table}] {key}", "key", str(key), known)


def load_config(files: RootFiles) -> dict[str, Any]:
    """The parsed config file, or {} when the root has none.

    Read through the confined file layer: a ``.contextfs`` folder or config file that is
    a symlink (it can arrive in a clone) is refused, never followed.
    """
    try:
        data = files.read(CONFIG_PATH)
    except InvalidPathError:
        raise ConfigError(f"{CONFIG_PATH} is (or lies under) a symlink, and contextfs never follows links; "
                          "replace it with a real file") from None
    except ContextFSError as exc:
        raise ConfigError(f"{CONFIG_PATH}: cannot read it ({exc})") from None
    if data is None:
        return {}
    if len(data) > 1024 * 1024:
        raise ConfigError(f"{CONFIG_PATH} is larger than 1 MB; keep settings short")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{CONFIG_PATH}: it is not UTF-8 text; re-save it as UTF-8") from None
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_PATH}: invalid TOML ({exc}); fix the file or delete it to use the defaults") from None
    except ValueError:  # int() refuses a number of more than 4,300 digits
        raise ConfigError(f"{CONFIG_PATH}: a number in it is too long to read (more than 4,300 digits); "
                          "fix the file or delete it to use the defaults") from None
    for name, value in config.items():
        if name not in TABLES:
            raise _unknown(f"[{name}]", "table", name, TABLES)
        if not isinstance(value, Mapping):
            raise ConfigError(f"{CONFIG_PATH}: {name} must be a table; write it as a [{name}] section")
    return config
