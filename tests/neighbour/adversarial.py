"""The hand-written adversarial programs (`adversarial/*.fz`) and their headers.

Each file opens with `//` comment lines `key: value` (a line without a key
continues the previous value):

    // attack:  what the program attacks (required)
    // right:   the right outcome: rejected by check, charged what it costs,
    //          or identical / within the sensitivity on both neighbours (required)
    // expect:  safe (default: rejected, or accepted and within its claim on
    //          every pair) | rejected (check must refuse it) | accepted
    // run:     definitions to run, each NAME or NAME=MODEL (models: see compare.py;
    //          default: every one-bag definition, deterministic or "outcome")
    // rows:    sizes n: also run n typical rows against n + 1
    // fill:    COLUMN=VALUE ...: the typical row's values
    // add:     COLUMN=VALUE ...: the values of the row added to n typical rows
    // charge:  NAME>=EPS ...: the least pure epsilon the definition must be
    //          charged (what it really costs), when check accepts it
    // catalogue: no (skip the catalogue of adversarial pairs)
    // bisect:  LO HI: find the size where the ending changes, if it does
    // via:     cli (also run through `fuzzpy run` and its ledger)
    // seconds: the case's time limit (it runs in a forked child)
    // vector:  the length of the vectors of a `bag (vec[p] num)`
    // seeds:   the noise seeds to run every pair with (default: one)
"""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from .harness import Case

FOLDER = Path(__file__).resolve().parent / "adversarial"
_KEY = re.compile(r"^//\s*([a-z]+):\s?(.*)$")
_MORE = re.compile(r"^//\s?(.*)$")
KEYS = {"attack", "right", "expect", "run", "rows", "fill", "add", "charge", "catalogue", "bisect", "via", "seconds",
        "vector", "seeds"}


def header(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("//"):
            break
        match = _KEY.match(line)
        if match and match.group(1) in KEYS:
            last = match.group(1)
            fields[last] = match.group(2).strip()
        elif last is not None:
            more = _MORE.match(line)
            fields[last] = (fields[last] + " " + (more.group(1).strip() if more else "")).strip()
    return fields


def _cell(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _assignments(text: str) -> dict[str, Any]:
    return {k: _cell(v) for k, _, v in (item.partition("=") for item in text.split())}


def load(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    fields = header(text)
    missing = {"attack", "right"} - fields.keys()
    if missing:
        raise ValueError(f"{path.name}: the header lacks {sorted(missing)}")
    models: dict[str, str] = {}
    for item in fields.get("run", "").split():
        name, _, model = item.partition("=")
        models[name] = model or ""
    bisect = tuple(int(n) for n in fields["bisect"].split()) if "bisect" in fields else None
    case = Case(
        name=path.stem,
        source=text,
        models=models,
        expect=fields.get("expect", "safe"),
        sizes=tuple(int(n) for n in fields.get("rows", "").replace(",", " ").split()),
        fill=_assignments(fields.get("fill", "")),
        extra=_assignments(fields.get("add", "")),
        charges={name: Fraction(least) for name, _, least in
                 (item.partition(">=") for item in fields.get("charge", "").split())},
        use_catalogue=fields.get("catalogue", "yes") != "no",
        bisect=bisect,  # type: ignore[arg-type]
        vector_length=int(fields.get("vector", "2")),
        via_cli=fields.get("via", "") == "cli",
        seconds=float(fields.get("seconds", "120")),
    )
    if "seeds" in fields:
        case = dataclasses.replace(case, seeds=tuple(int(n) for n in fields["seeds"].split()))
    if case.expect not in ("safe", "rejected", "accepted"):
        raise ValueError(f"{path.name}: unknown expectation {case.expect!r}")
    return case


def all_cases() -> list[Case]:
    return [load(path) for path in sorted(FOLDER.glob("*.fz"))]
