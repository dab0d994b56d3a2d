"""The per-user cache directory (compiled grammar, proofs) and safe writes to it.

Where: ``$FUZZPY_CACHE`` if set to a directory (``off`` turns every cache
off; ``on`` and the empty value mean the default place); else
``$XDG_CACHE_HOME/fuzzpy`` (``~/.cache/fuzzpy``); on Windows
``%LOCALAPPDATA%\\fuzzpy\\cache``. Everything in it can be deleted at any time.

A cache is an attack surface (a forged entry could make fuzzpy skip work it
must do, and the grammar's entry is a pickle, which runs code as it loads),
so on POSIX an entry is read only if the file, its directory and the cache's
root are owned by the user and writable by no one else (a17: a file of mode
0666 in a private directory could be rewritten by anyone).
Entries are written atomically (a temporary file renamed into place), so a
reader never sees half an entry; readers still check every entry they load.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

CACHE_ENV = "FUZZPY_CACHE"


def cache_dir(kind: str) -> Path | None:
    """The directory for one kind of entry (``grammar``, ``proofs``), or None
    when caching is turned off."""
    configured = os.environ.get(CACHE_ENV)
    if configured is not None and configured.strip().lower() == "off":
        return None
    if configured and configured.strip().lower() != "on":
        base = Path(configured).expanduser()
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"]) / "fuzzpy" / "cache"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fuzzpy"
    return base / kind


def trusted(path: Path) -> bool:
    """May ``path`` (a cache entry) be read? It, its directory and the
    directory above (the cache's root) belong to this user and are writable
    by no one else (POSIX)."""
    if os.name != "posix":
        return path.is_file()
    try:
        entry, folder, root = path.lstat(), path.parent.lstat(), path.parent.parent.lstat()
    except OSError:
        return False
    return stat.S_ISREG(entry.st_mode) and all(
        _private(s) for s in (entry, folder, root)) and stat.S_ISDIR(folder.st_mode) and stat.S_ISDIR(root.st_mode)


def _private(status: os.stat_result) -> bool:
    return status.st_uid == os.getuid() and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def make_dir(folder: Path) -> bool:
    """Create the directory (private to the user); False if that fails."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return False
    return folder.is_dir()


def write_atomic(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` in one step (temporary file, fsync, rename).
    Failures (read-only disk, no space) are ignored: a cache is optional."""
    if not make_dir(path.parent):
        return False
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
