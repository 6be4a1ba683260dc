"""``.contextfs/config.toml``: committed settings, read at the edges and passed in.

Only reading lives here; layers that own a section (scopes, topics, memory) validate
their own part and raise ConfigError with the key that is wrong.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import ConfigError, ContextFSError, InvalidPathError
from .files import RootFiles

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["CONFIG_PATH", "load_config"]

CONFIG_PATH = ".contextfs/config.toml"


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
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_PATH}: invalid TOML ({exc}); fix the file or delete it to use the defaults") from None
