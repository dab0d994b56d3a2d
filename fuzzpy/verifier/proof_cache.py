"""Proofs kept on disk, so that an unchanged mechanism is proved once.

`fuzzpy check`, `verify` and `run` turn the cache on (`enabled()`); a proof
found by one of them is then reused by the others, in later processes,
without any z3 work. Only proofs are stored, and only those the proof kernel
accepted, each with its certificate (docs/verifier-kernel.md): a refutation or
an "unknown" (which depends on the time limits and the machine's load) is
decided again.

The key is everything the verifier's answer depends on, as text:

* the mechanism's syntax tree, printed field by field without source
  positions (so moving or re-indenting a mechanism keeps its proof, and any
  change to what it says loses it);
* the static `let` constants of its program, exactly (the only part of the
  program the verifier reads: `verify_mechanism` passes it the mechanism and
  these values);
* the fuzzpy version, a SHA-256 of the verifier's own source files (any change
  to the verifier, even without a new version number, starts afresh) and
  z3's version. The time limits are not part of it: a proof found with more
  time is still a proof.

Soundness: an entry is used only if it is a well-formed "proved" record
whose stored key text equals this key exactly and whose stored hash is this
key's hash (and the file's name); anything else (damaged, truncated, another
key, another verifier) is ignored and, once the mechanism is proved again,
overwritten. Entries are read only from a private directory
(`fuzzpy.support.usercache.trusted`). `verify --explain` always proves afresh: the
explanation shows the proof itself, and stores it again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from fuzzpy.language.syntax import MechanismDecl
from fuzzpy.support.usercache import cache_dir, trusted, write_atomic
from fuzzpy.support.version import VERSION

if TYPE_CHECKING:
    from fuzzpy.verifier.verdict import Verdict

FORMAT = "fuzzpy-proof 2"  # 2: with the kernel-accepted certificate

_modes: list[bool] = []  # one per open `enabled()` block: may proofs be read?
_from_disk: set[int] = set()  # ids of verdicts read from the cache in this process


@contextmanager
def enabled(read: bool = True) -> Iterator[None]:
    """Within the block, `verify_mechanism` writes the proofs it finds to the
    disk cache and, if ``read``, reuses the proofs found there."""
    _modes.append(read)
    try:
        yield
    finally:
        _modes.pop()


def active() -> bool:
    """Are proofs to be written?"""
    return bool(_modes) and cache_dir("proofs") is not None


def reading() -> bool:
    """Are cached proofs to be reused?"""
    return active() and _modes[-1]


def from_disk(verdict: object) -> bool:
    """Was this verdict read from the cache (no proof search in this process)?"""
    return id(verdict) in _from_disk


# ---------------------------------------------------------------- the key


def key_text(decl: MechanismDecl, constants: dict[str, Fraction]) -> str:
    lines = [
        FORMAT,
        f"fuzzpy {VERSION}",
        f"verifier {verifier_digest()}",
        f"z3 {_z3_version()}",
        "constants " + json.dumps({name: str(value) for name, value in sorted(constants.items())}),
        "mechanism " + tree_text(decl),
    ]
    return "\n".join(lines) + "\n"


def tree_text(node: object) -> str:
    """A syntax tree as text: every field that takes part in equality (source
    positions do not), with its type's name; numbers exact."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        fields = (f for f in dataclasses.fields(node) if f.compare)
        inner = ", ".join(f"{f.name}={tree_text(getattr(node, f.name))}" for f in fields)
        return f"{type(node).__name__}({inner})"
    if isinstance(node, (tuple, list)):
        return "[" + ", ".join(tree_text(item) for item in node) + "]"
    if isinstance(node, str):
        return json.dumps(node)
    if isinstance(node, bool) or node is None:
        return repr(node)
    if isinstance(node, int):
        return str(node)
    if isinstance(node, Fraction):
        return f"{node.numerator}/{node.denominator}"
    if isinstance(node, float):
        return node.hex()
    raise TypeError(f"no key text for a {type(node).__name__}")  # never guess: no cache entry then


@cache
def verifier_digest() -> str:
    """SHA-256 of the source files the verifier's answers depend on."""
    package = Path(__file__).resolve().parent
    files = sorted(package.rglob("*.py")) + [package.parent / "language" / "syntax.py"]
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(package.parent).as_posix()
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _z3_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("z3-solver")
    except PackageNotFoundError:
        return "unknown"


def _entry_path(digest: str) -> Path | None:
    folder = cache_dir("proofs")
    return None if folder is None else folder / f"{digest}.json"


# ---------------------------------------------------------------- read and write


def lookup(decl: MechanismDecl, constants: dict[str, Fraction]) -> Verdict | None:
    """The cached proof of this exact mechanism under this exact verifier, if any."""
    try:
        key = key_text(decl, constants)
    except (TypeError, OSError):
        return None
    digest = hashlib.sha256(key.encode()).hexdigest()
    path = _entry_path(digest)
    if path is None or not trusted(path):
        return None
    try:
        entry = json.loads(path.read_bytes().decode("utf-8"))
        verdict = _verdict_of(entry, key, digest, decl)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if verdict is not None:
        _from_disk.add(id(verdict))
    return verdict


def store(decl: MechanismDecl, constants: dict[str, Fraction], verdict: Verdict) -> None:
    """Keep a proof the kernel accepted (other verdicts are not stored: a
    "proved" verdict exists only with a kernel-accepted certificate)."""
    if not verdict.proved or verdict.certificate is None:
        return
    try:
        key = key_text(decl, constants)
    except (TypeError, OSError):
        return
    digest = hashlib.sha256(key.encode()).hexdigest()
    path = _entry_path(digest)
    if path is None:
        return
    entry = {
        "format": FORMAT,
        "key_sha256": digest,
        "key": key,
        "verdict": {
            "name": verdict.name,
            "status": "proved",
            "claim_text": verdict.claim_text,
            "reason": verdict.reason,
            "stream": verdict.stream,
            "vacuous": verdict.vacuous,
            "seconds": verdict.seconds,
            "certificate": verdict.certificate.to_json(),
        },
    }
    write_atomic(path, json.dumps(entry, indent=1).encode("utf-8"))


def _verdict_of(entry: object, key: str, digest: str, decl: MechanismDecl) -> Verdict | None:
    """The entry's verdict if it is exactly this key's proof, else None."""
    from fuzzpy.verifier.verdict import Verdict

    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return None
    if entry.get("key") != key or entry.get("key_sha256") != digest:
        return None
    if hashlib.sha256(str(entry["key"]).encode()).hexdigest() != digest:
        return None
    stored = entry["verdict"]
    if not isinstance(stored, dict) or stored.get("status") != "proved" or stored.get("name") != decl.name:
        return None
    reason, claim_text = stored.get("reason"), stored.get("claim_text")
    stream, vacuous, seconds = stored.get("stream"), stored.get("vacuous"), stored.get("seconds", 0.0)
    if not (isinstance(claim_text, str) and (reason is None or isinstance(reason, str))):
        return None
    if not (isinstance(stream, bool) and isinstance(vacuous, bool) and isinstance(seconds, (int, float))):
        return None
    from fuzzpy.verifier.kernel.certificate import Certificate

    certificate = Certificate.from_json(stored["certificate"])  # the proof the kernel accepted when it was stored
    return Verdict(decl.name, "proved", decl.privacy, claim_text, reason, None, None,
                   stream=stream, vacuous=vacuous, seconds=float(seconds), certificate=certificate)
