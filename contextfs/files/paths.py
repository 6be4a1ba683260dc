"""The path gate: every path from every caller passes :func:`check` before any I/O.

Paths arrive from LLMs, so they are treated as hostile. The gate is purely lexical
except for two filesystem checks it cannot avoid: symlinks on the way (contextfs never
follows one) and case-only collisions with existing names (so a root stays cloneable
on case-insensitive filesystems). Nothing is created here, not even parent folders.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from ..errors import InvalidPathError

__all__ = ["INTERNAL_DIRS", "MANAGED_FILES", "check", "full_path", "shown", "slugify"]

#: Folders that belong to contextfs itself; reachable only through their own operations.
INTERNAL_DIRS = frozenset({".trash", ".contextfs"})
#: Files contextfs manages; they may be read but never written through a path argument.
MANAGED_FILES = frozenset({".gitignore", ".gitattributes", ".gitmodules"})

MAX_PATH_CHARS = 1024
MAX_NAME_BYTES = 255
_WINDOWS_DEVICES = {"con", "prn", "aux", "nul"} | {
    f"{p}{i}" for p in ("com", "lpt") for i in range(10)
}
_FORBIDDEN_CHARS = set('<>:"|?*\\')
_DRIVE = re.compile(r"^[A-Za-z]:")
_EXAMPLE = "use a relative POSIX path inside the context root, e.g. 'project/README.md'"


def shown(raw: object) -> str:
    """``raw`` quoted for a message: its repr, which escapes what is not printable (a lone
    surrogate, a NUL), cut to 120 characters."""
    text = repr(raw)
    return text if len(text) <= 120 else text[:117] + "..."


def _refuse(raw: object, why: str) -> InvalidPathError:
    return InvalidPathError(f"invalid path {shown(raw)}: {why}; {_EXAMPLE}")


def _looks_like_git(name: str) -> bool:
    # The characters HFS+ and NTFS ignore in names ('.g\u200cit' is '.git' there) are all
    # format characters, which _check_name refuses before it asks this; NFKC makes none.
    # NTFS reads '.git. ::$INDEX_ALLOCATION' as '.git': the name before a stream (':') without
    # its trailing dots and spaces.
    folded = unicodedata.normalize("NFKC", name).casefold().split(":", 1)[0].rstrip(". ")
    return folded == ".git" or folded.startswith("git~") or folded == ".git~1"


def _check_name(raw: str, name: str) -> None:
    if not name:
        raise _refuse(raw, "empty path component ('//' or a trailing '/')")
    # C0, DEL and C1 (U+0080-U+009F: a terminal may read U+009B as an escape) alike.
    control = next((ch for ch in name if unicodedata.category(ch) == "Cc"), None)
    if control is not None:
        raise _refuse(raw, f"control character U+{ord(control):04X} is not allowed in names")
    # Bidi overrides, zero-width, private-use and unassigned characters make a name look
    # like another one (lone surrogates were refused with the whole path, as invalid text).
    odd = next((ch for ch in name if unicodedata.category(ch) in ("Cf", "Co", "Cn")), None)
    if odd is not None:
        raise _refuse(
            raw, f"invisible or unassigned character U+{ord(odd):04X} is not allowed in names"
        )
    bad = _FORBIDDEN_CHARS.intersection(name)
    if bad:
        raise _refuse(raw, f"character {sorted(bad)[0]!r} is not allowed in names (not portable)")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise _refuse(raw, f"a name is longer than {MAX_NAME_BYTES} bytes")
    if name.endswith((".", " ")) and name not in (".", ".."):
        raise _refuse(raw, "names may not end with a dot or a space (not portable)")
    if _looks_like_git(name):
        raise _refuse(raw, "'.git' is reserved for the repository")
    if name.split(".", 1)[0].casefold().rstrip(" ") in _WINDOWS_DEVICES:
        raise _refuse(raw, f"{name!r} is a reserved device name on Windows")


def _normalise(raw: object) -> list[str]:
    if not isinstance(raw, str):
        raise _refuse(raw, f"expected a string, got {type(raw).__name__}")
    if any("\ud800" <= ch <= "\udfff" for ch in raw):
        raise _refuse(raw, "it contains a lone surrogate character, which is not valid text")
    if len(raw) > MAX_PATH_CHARS:
        raise _refuse(raw, f"longer than {MAX_PATH_CHARS} characters")
    if "\\" in raw or _DRIVE.match(raw):
        raise _refuse(raw, "backslashes and drive letters are not allowed")
    text = unicodedata.normalize("NFC", raw)
    if text.startswith("/") or text.startswith("~"):
        raise _refuse(raw, "absolute paths are not allowed")
    if text.endswith("/"):
        text = text[:-1]
    if not text:
        return []
    parts: list[str] = []
    for name in text.split("/"):
        _check_name(raw, name)
        if name == ".":
            continue
        if name == "..":
            if not parts:
                raise _refuse(raw, "'..' leaves the context root")
            parts.pop()
            continue
        parts.append(name)
    return parts


def check(
    root: Path,
    raw: object,
    *,
    write: bool = False,
    allow_root: bool = False,
    allow_internal: bool = False,
) -> str:
    """Return ``raw`` as a normalised relative POSIX path, or raise InvalidPathError.

    ``write`` adds the checks that only matter when something will be created: managed
    files are refused and a name that differs only in case from an existing one is too.
    ``allow_root`` accepts the empty path (listing the whole tree).
    """
    parts = _normalise(raw)
    if not parts:
        if allow_root:
            return ""
        raise _refuse(raw, "the path is empty")
    # No name ends with a dot or a space ('.trash.' was refused), so case is all to fold.
    if parts[0].casefold() in INTERNAL_DIRS and not allow_internal:
        raise _refuse(
            raw, f"{parts[0]!r} is internal to contextfs; use its own operations (trash, restore)"
        )
    if write and parts[-1].casefold() in MANAGED_FILES:
        raise _refuse(raw, f"{parts[-1]!r} is managed by contextfs and cannot be written")
    _check_filesystem(root, raw, parts, write=write)
    return "/".join(parts)


def _check_filesystem(root: Path, raw: object, parts: list[str], *, write: bool) -> None:
    """Refuse symlinks anywhere on the path and case-only twins of existing names."""
    current = root
    for i, name in enumerate(parts):
        candidate = current / name
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            if write:
                _check_case_twin(current, raw, name)
            # Nothing below a missing entry can exist either.
            return
        except OSError as exc:
            raise _refuse(raw, f"cannot inspect the path ({exc.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            raise _refuse(raw, "symlinks are never followed")
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            raise _refuse(raw, f"{'/'.join(parts[: i + 1])!r} is a file, not a folder")
        current = candidate


def _check_case_twin(folder: Path, raw: object, name: str) -> None:
    try:
        siblings = os.listdir(folder)
    except OSError:
        return
    folded = name.casefold()
    for other in siblings:
        composed = unicodedata.normalize("NFC", other)
        if other != name and composed != name and composed.casefold() == folded:
            raise _refuse(raw, f"it differs only in case from the existing {other!r}")


def full_path(root: Path, rel: str) -> Path:
    """Join a path that already passed :func:`check` onto the root."""
    return root.joinpath(*rel.split("/")) if rel else root


def slugify(text: str, *, max_len: int = 48, words: int | None = None, default: str = "") -> str:
    """A file-name-safe slug: lowercase ASCII words joined by '-', cut on a word boundary.

    Every layer that names files after text (topics, archived tasks, archival notes)
    uses this one function, so names look alike and always pass :func:`check`.
    """
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    parts = [w for w in re.split(r"[^a-z0-9]+", ascii_text.lower()) if w]
    if words is not None:
        parts = parts[:words]
    slug = "-".join(parts)
    if len(slug) > max_len:
        # Cut on the last word boundary at or before max_len (a word ending exactly there is
        # kept); one word longer than max_len is cut inside.
        head = slug[: max_len + 1]
        slug = head.rsplit("-", 1)[0] if "-" in head else slug[:max_len]
    slug = slug or default
    if slug in _WINDOWS_DEVICES:  # 'con', 'aux', 'com1'... are not valid file names on Windows
        slug = f"{slug}-{default or 'item'}"
    return slug
