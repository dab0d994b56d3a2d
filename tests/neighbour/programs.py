"""Generated programs: well-typed `def`s over one row type, biased to the edges.

Each program declares the row type `R`, a few static constants (zero, huge,
tiny, 2^62...), a `def rec`, one deterministic query `q (db : bag R) : T`
and one `fuzzy` release `m (db : bag R)` built on it, with the model that
says how far its seeded releases may move (see `compare.py`). The query
language covers the database primitives (map, filter, split, size,
sum[lo, hi], group[k], counts, tabulate, vsum, clip2, dot, and matrices:
vsums, mmap, mtranspose, mentry, norm conversions), scalar
arithmetic with static and data-derived values, let, if / case on public and
private data, tuples, with-pairs and lists; edge cases are favoured: static
zeros (`0 * e` with an infinitely sensitive e), unused lets, huge constants,
division, log / exp / sqrt of data-derived values, and cancellation
(`(e + big) - big`). Programs the checker rejects are counted and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from .datasets import Schema

ROW_TYPE = "type R = { a : num, b : num, k : int, f : bool, s : string };"
SCHEMA = Schema((("a", "num"), ("b", "num"), ("k", "int"), ("f", "bool"), ("s", "string")))

CONSTANTS = """\
let zero = 0;
let big = 4611686018427387904.0;
let huge = 1e300;
let tiny = 1e-300;
let third = 1 / 3;

def rec down (n : num) : num = if n <= 0 then 0 else 1 + down (n - 1);
"""

#: Static numbers a program may use (text).
STATICS = ("0", "1", "2", "3", "0.5", "0.1", "10", "1000", "zero", "big", "huge", "tiny", "third",
           "1e15", "1e308", "2.5", "100000")
NONZERO = tuple(c for c in STATICS if c not in ("0", "zero"))
#: Clamp bounds [lo, hi].
BOUNDS = (("0", "1"), ("-1", "1"), ("0", "10"), ("0", "1e15"), ("0", "1e308"), ("-1e308", "1e308"),
          ("0", "big"), ("0", "0"), ("-2.5", "0.5"), ("0", "tiny"), ("0", "1000000000000000"))
INT_STATICS = ("0", "1", "2", "-1", "7", "9223372036854775807", "4611686018427387904")
STRINGS = ('"a b"', '"x"', '""', '"héllo wörld"', '"日本語 テキスト"')
EPSILONS = ("1", "0.5", "0.1", "2", "0.001", "1e-6", "1 / 1000000000000000", "1e-308", "1000")

Draw = Callable[[st.SearchStrategy[Any]], Any]


@dataclass(frozen=True)
class Generated:
    source: str
    models: dict[str, str]  # definition -> model (compare.py)


class Writer:
    """Draws program text; `depth` bounds the nesting of each expression."""

    def __init__(self, draw: Draw) -> None:
        self.draw = draw
        self.fresh = 0

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return self.draw(st.sampled_from(list(options)))

    def chance(self, p: float) -> bool:
        return self.draw(st.integers(0, 999)) < p * 1000

    def name(self, stem: str) -> str:
        self.fresh += 1
        return f"{stem}{self.fresh}"

    # ------------------------------------------------------------ per row (inside `fun r -> ...`)

    def row_num(self, r: str, depth: int) -> str:
        leaves = [f"{r}.a", f"{r}.b", f"{r}.k", self.pick(STATICS)]
        if depth <= 0:
            return self.pick(leaves)
        sub = lambda: self.row_num(r, depth - 1)  # noqa: E731
        choice = self.draw(st.integers(0, 15))
        if choice <= 3:
            return self.pick(leaves)
        if choice == 4:
            return f"({sub()} {self.pick(['+', '-', '*', '/'])} {sub()})"
        if choice == 5:
            return f"{self.pick(['log', 'exp', 'sqrt', 'abs', 'floor', 'sigmoid'])} ({sub()})"
        if choice == 6:
            lo, hi = self.pick(BOUNDS)
            return f"clip[{lo}, {hi}] ({sub()})"
        if choice == 7:
            return f"(if {self.row_bool(r, depth - 1)} then {sub()} else {sub()})"
        if choice == 8:
            return f"(({sub()} + big) - big)"
        if choice == 9:
            return f"(0 * {sub()})"
        if choice == 10:
            return f"{self.pick(['min', 'max'])} ({sub()}) ({sub()})"
        if choice == 11:
            return f"({sub()} * {self.pick(['1e300', 'huge', 'tiny', '1e-320'])})"
        if choice == 12:
            return f"(case (if {self.row_bool(r, depth - 1)} then inl ({sub()}) else inr ({sub()}) : num + num) of inl x -> x | inr y -> 2 * y)"
        if choice == 13:
            return f"({r}.k {self.pick(['+', '*', '-'])} {self.pick(INT_STATICS)})"
        if choice == 14:
            return f"{self.row_num(r, depth - 1)} / ({r}.a - {r}.b)"
        return f"(let x = {sub()} in x - x)"

    def row_int(self, r: str, depth: int) -> str:
        if depth <= 0 or self.chance(0.5):
            return self.pick([f"{r}.k", self.pick(INT_STATICS), f"({r}.k - 2 * 3)"])
        sub = lambda: self.row_int(r, depth - 1)  # noqa: E731
        if self.chance(0.5):
            return f"({sub()} {self.pick(['+', '-', '*'])} {sub()})"
        return f"(if {self.row_bool(r, depth - 1)} then {sub()} else {sub()})"

    def row_bool(self, r: str, depth: int) -> str:
        choice = self.draw(st.integers(0, 7 if depth > 0 else 3))
        if choice == 0:
            return f"{r}.f"
        if choice == 1:
            return f"{r}.s {self.pick(['==', '!='])} {self.pick(STRINGS)}"
        if choice == 2:
            return f"{r}.k > {self.pick(INT_STATICS)}"
        if choice == 3:
            return f"{r}.a {self.pick(['<', '>=', '=='])} {self.pick(STATICS)}"
        if choice == 4:
            return f"not ({self.row_bool(r, depth - 1)})"
        if choice == 5:
            return f"({self.row_bool(r, depth - 1)} {self.pick(['&&', '||'])} {self.row_bool(r, depth - 1)})"
        return f"{self.row_num(r, depth - 1)} {self.pick(['<', '>', '==', '!='])} {self.row_num(r, depth - 1)}"

    def row_fun(self, body: Callable[[str, int], str], depth: int) -> str:
        r = self.name("r")
        return f"(fun {r} -> {body(r, depth)})"

    # ------------------------------------------------------------ bags

    def bag(self, db: str, depth: int) -> str:
        if depth <= 0 or self.chance(0.5):
            return db
        return f"(filter {self.row_fun(self.row_bool, 2)} {self.bag(db, depth - 1)})"

    def bag_num(self, db: str, depth: int) -> str:
        inner = f"(map {self.row_fun(self.row_num, 2)} {self.bag(db, depth - 1)})"
        if self.chance(0.2):
            x = self.name("x")
            return f"(filter (fun {x} -> {x} > {self.pick(STATICS)}) {inner})"
        return inner

    # ------------------------------------------------------------ queries: db-sensitive numbers

    def query(self, db: str, depth: int) -> str:
        """A number with (usually) finite sensitivity in the bag `db`."""
        if depth <= 0:
            return self.query_leaf(db)
        sub = lambda: self.query(db, depth - 1)  # noqa: E731
        choice = self.draw(st.integers(0, 21))
        if choice <= 3:
            return self.query_leaf(db)
        if choice == 4:
            return f"({sub()} {self.pick(['+', '-'])} {sub()})"
        if choice == 5:
            return f"({self.pick(STATICS)} * {sub()})"
        if choice == 6:
            return f"({sub()} / {self.pick(NONZERO)})"
        if choice == 7:
            lo, hi = self.pick(BOUNDS)
            return f"clip[{lo}, {hi}] ({sub()})"
        if choice == 8:
            return f"{self.pick(['abs', 'sigmoid', '-'])} ({sub()})"
        if choice == 9:
            return f"{self.pick(['min', 'max'])} ({sub()}) ({sub()})"
        if choice == 10:
            x = self.name("x")
            use = self.pick([f"{x}", f"{x} + {x}", f"{x} - {x}", self.pick(STATICS), f"0 * {x}"])
            return f"(let {x} = {sub()} in {use} + {sub()})"
        if choice == 11:
            return f"(if {self.public_bool()} then {sub()} else {sub()})"
        if choice == 12:
            return f"(0 * {self.wild(db, depth - 1)} + {sub()})"
        if choice == 13:
            return f"(({sub()} + {self.pick(['big', '1e16', 'huge', '1e308'])}) - {self.pick(['big', '1e16', 'huge', '1e308'])})"
        if choice == 14:
            return f"{self.pick(['fst', 'snd'])} (<{sub()}, {sub()}>)"
        if choice == 15:
            x, y = self.name("p"), self.name("q")
            pred = self.row_fun(self.row_bool, 2)
            return f"(let ({x}, {y}) = split {pred} {self.bag(db, depth - 1)} in {self.query(x, depth - 1)} + {self.query(y, depth - 1)})"
        if choice == 16:
            k = self.pick(["1", "3", "40"])
            weights = ", ".join(self.pick(["0", "1", "-1", "0.5", "zero"]) for _ in range(int(k)))
            return f"dot [{weights}] (counts (group[{k}] {self.row_fun(self.row_int, 1)} {self.bag(db, depth - 1)}))"
        if choice == 17:
            x = self.name("u")
            return f"(let {x} = {self.wild(db, depth - 1)} in {sub()})"
        if choice == 18:
            x, y = self.name("x"), self.name("y")
            return f"(case (if {self.public_bool()} then inl ({sub()}) else inr ({sub()}) : num + num) of inl {x} -> {x} | inr {y} -> {y})"
        if choice == 19:
            return f"dot [{self.pick(['0', '1', 'zero', '0.5'])}, {self.pick(['0', '1', 'zero'])}] (vsum[{self.pick(['1', '0.5', '1e300'])}] {self.vec_rows(db, depth - 1)})"
        if choice == 20:
            return f"(0 * {self.wild(db, depth - 1)})"
        return f"({sub()} * {self.pick(['0.1', '3', 'third', '1e-300', 'huge', '1e300'])})"

    def query_leaf(self, db: str) -> str:
        choice = self.draw(st.integers(0, 4))
        if choice <= 1:
            return f"size {self.bag(db, 1)}"
        if choice <= 3:
            lo, hi = self.pick(BOUNDS)
            return f"sum[{lo}, {hi}] {self.bag_num(db, 1)}"
        return self.pick(STATICS)

    def wild(self, db: str, depth: int) -> str:
        """A number that may be infinitely sensitive in `db`, undefined or
        infinite at run time: what `0 *` and unused lets may hide."""
        sub = self.query(db, max(depth, 0))
        choice = self.draw(st.integers(0, 9))
        forms = [
            f"log ({sub} - {self.pick(['5', '1', '0'])})",
            f"exp ({sub})",
            f"sqrt ({sub} - 3)",
            f"(1 / ({sub} - {self.pick(['1', '2', '0'])}))",
            f"({sub} * {sub})",
            f"({sub} / {self.query(db, 0)})",
            f"(if {sub} > {self.pick(['1', '3'])} then {sub} else 1e308)",
            f"down ({sub})",
            f"floor ({sub})",
            f"({sub} * 1e300 * 1e300)",
        ]
        return forms[choice]

    def public_bool(self) -> str:
        return self.pick(["true", "false", "1 < 2", "zero == 0", "huge > big", "not (third * 3 == 1)"])

    def vec_rows(self, db: str, depth: int) -> str:
        r = self.name("r")
        entries = ", ".join(self.row_num(r, 1) for _ in range(2))
        return f"(map (fun {r} -> [{entries}]) {self.bag(db, max(depth, 0))})"

    # ------------------------------------------------------------ the two definitions

    def program(self) -> Generated:
        depth = self.draw(st.integers(1, 3))
        kind = self.draw(st.sampled_from(QUERY_KINDS))
        query_type, query_body, release = kind(self, depth)
        models = {"q": "deterministic", "m": release.model}
        trusted = ""
        if query_type == "num" and self.chance(0.3):  # a trusted primitive applied to the query (issue 27)
            trusted, query_body = self.trusted_primitive(query_body)
        if self.chance(0.4):  # the release written over static parameters, instantiated twice (issue 27)
            release, extra = parametrised(self, release)
            models.update({name: release.model for name in extra})
        if release.model in ZCDP_MODELS and self.chance(0.15):  # the release's own measure, zCDP (issue 27)
            release = Release(_HEADERS.sub(lambda h: f"{h.group(0)[:-2]} privacy zcdp[{self.pick(ZCDP_DELTAS)}] =",
                                           release.text), release.model)
        lines = [ROW_TYPE, CONSTANTS, trusted, f"def q (db : bag R) : {query_type} =\n  {query_body};", release.text]
        return Generated("\n".join(lines) + "\n", models)

    def trusted_primitive(self, argument: str) -> tuple[str, str]:
        """An `assume def` (Fuzz's trusted primitives, Reed & Pierce ICFP
        2010) with a true declared bound (its body's Lipschitz constant, or
        more): z3 proves some, others (softplus, a sigmoid) stay unchecked
        assumptions whose claims the runs judge like any other."""
        body, lipschitz = self.pick_trusted()
        declared = lipschitz * Fraction(self.pick(["1", "1", "2", "3/2"]))
        bound = str(declared.numerator) if declared.denominator == 1 else f"{declared.numerator} / {declared.denominator}"
        name = self.name("trusted")
        return f"assume def {name} (x :[{bound}] num) : num = {body};", f"{name} ({argument})"

    def pick_trusted(self) -> tuple[str, Fraction]:
        body, lipschitz = self.draw(st.sampled_from(TRUSTED))
        return body, Fraction(lipschitz)


#: bodies of trusted primitives over one `num` x and their true Lipschitz constants
TRUSTED = (
    ("log (1 + exp x)", "1"),  # softplus: outside z3's fragment, an unchecked assumption
    ("if x <= 0 then 0 else if x >= 1 then 1 else x", "1"),  # the rules say inf; z3 proves 1
    ("max x 0", "1"),
    ("x / 2 + abs x / 2", "1"),
    ("3 * clip[-1, 1] x", "3"),
    ("sigmoid x", "1/4"),
    ("min (2 * x) (x + 1)", "2"),
    ("abs (x - 7) - abs (x + 7)", "2"),
)
#: releases a `privacy zcdp[delta]` may be declared on (each has a zCDP bound)
ZCDP_MODELS = ("laplace", "gauss", "geometric", "dgauss", "staircase")
ZCDP_DELTAS = ("1e-6", "1e-5", "0.001", "1 / 3", "1e-12")
#: the headers of the releases the harness runs (`m`, and `m2` of a parametrised one)
_HEADERS = re.compile(r"def m2? \(db : bag R\) : [^=]*? =")


@dataclass(frozen=True)
class Release:
    text: str
    model: str


_HEADER = re.compile(r"def m \(db : bag R\) : (.*?) =", re.S)
_STATIC_BRACKET = re.compile(r"\b(laplace|gauss|geometric|dgauss|staircase|expmech|loop|subsample)\[([^\[\]]+)\]")
#: `gauss_dp[s, eps, delta]`: its eps and delta may each become a parameter
_GAUSS_DP = re.compile(r"\bgauss_dp\[([^,\[\]]+), ([^,\[\]]+), ([^\[\]]+)\]")
_DELTAS = ("0.00001", "0.5", "1 / 3", "1e-300")
#: values a parameter may take at a call, by the bracket it stands in
_VALUES = {"laplace": EPSILONS, "expmech": EPSILONS, "gauss": ("1", "0.5", "1000", "3 / 7"),
           "geometric": ("1", "0.5", "2", "1 / 3"), "dgauss": ("1", "0.5", "40", "3 / 7"),
           "staircase": ("1", "0.5", "2", "1 / 3"),
           "loop": ("1", "2", "3"), "subsample": ("0.5", "1", "0.25")}


def parametrised(w: Writer, release: Release) -> tuple[Release, list[str]]:
    """The release as a library over static parameters (DFuzz/Duet style: the
    noise scale, rounds or rate a parameter, sometimes scaled: `p / 4`), and
    `m` / `m2` calling it at values drawn at random: each call is checked
    and run at its own numbers, so the harness judges every instantiation
    by the claim the checker made for it."""
    header = _HEADER.match(release.text)
    calibrated = _GAUSS_DP.search(release.text)
    if header is not None and calibrated is not None:
        return _parametrised_gauss_dp(w, release, header.group(1), calibrated)
    brackets = list(_STATIC_BRACKET.finditer(release.text))
    if header is None or not brackets:
        return release, []
    params: list[str] = []
    kinds: list[str] = []
    pieces: list[str] = []
    last = header.end()
    for found in brackets:
        if params and not w.chance(0.6):
            continue
        name = f"p{len(params)}"
        scaled = w.chance(0.3)
        pieces.append(release.text[last:found.start(2)] + (f"{name} / 4" if scaled else name))
        last = found.end(2)
        params.append(name)
        kinds.append(found.group(1) + ("/4" if scaled else ""))
    body = "".join(pieces) + release.text[last:]
    result = header.group(1)
    signature = " ".join(f"({p} : num)" for p in params)
    sized = w.chance(0.5)
    if sized:  # a `nat` size too (DFuzz's `forall n : nat`): checked once as a symbol, run at random sizes
        body = sized_body(w, body)
        signature = "(n : nat) " + signature
    calls = []
    for wrapper in ("m", "m2"):
        values = [w.pick(_SIZES)] if sized else []
        for kind in kinds:
            base = w.pick(_VALUES[kind.split("/")[0]])
            values.append(f"(4 * ({base}))" if kind.endswith("/4") else f"({base})")
        calls.append(f"def {wrapper} (db : bag R) : {result} = mlib {' '.join(values)} db;")
    text = f"def mlib {signature} (db : bag R) : {result} ={body}\n" + "\n".join(calls)
    return Release(text, release.model), ["m2"]


def _parametrised_gauss_dp(w: Writer, release: Release, result: str, found: re.Match[str]) -> tuple[Release, list[str]]:
    """`gauss_dp[s, eps, delta]` over its eps and delta (Duet's `pλ ε δ`),
    one or both a parameter (sometimes `p / 4`), called at random values:
    checked once as (eps, delta)-DP, each call at its numbers."""
    params, kinds, args = [], [], []
    for index, (value, kind) in enumerate(((found.group(2), "eps"), (found.group(3), "delta"))):
        if (params or index == 1) and not w.chance(0.6):
            args.append(value)
            continue
        name = f"p{len(params)}"
        scaled = w.chance(0.3)
        args.append(f"{name} / 4" if scaled else name)
        params.append(name)
        kinds.append(kind + ("/4" if scaled else ""))
    body = release.text[_HEADER.match(release.text).end():found.start()]  # type: ignore[union-attr]
    body += f"gauss_dp[{found.group(1)}, {args[0]}, {args[1]}]" + release.text[found.end():]
    signature = " ".join(f"({p} : num)" for p in params)
    calls = []
    for wrapper in ("m", "m2"):
        values = []
        for kind in kinds:
            base = w.pick(EPSILONS if kind.startswith("eps") else _DELTAS)
            values.append(f"(4 * ({base}))" if kind.endswith("/4") else f"({base})")
        calls.append(f"def {wrapper} (db : bag R) : {result} = mlib {' '.join(values)} db;")
    text = f"def mlib {signature} (db : bag R) : {result} ={body}\n" + "\n".join(calls)
    return Release(text, release.model), ["m2"]


#: the sizes a `nat` parameter takes at a call (a number, or arithmetic over constants)
_SIZES = ("1", "2", "3", "7", "(2 + 1)")


def sized_body(w: Writer, body: str) -> str:
    """The release with a `nat` parameter `n` in it: its query scaled (`n *
    q db`, `q db / n`, `(2 * n + 1) * q db`), a loop's rounds, or both."""
    if "(q db)" in body and w.chance(0.7):
        scaled = w.pick(["(n * (q db))", "((q db) / n)", "((2 * n + 1) * (q db))", "((q db) * n / n)"])
        body = body.replace("(q db)", scaled, 1)
    if "loop[" in body and w.chance(0.5):
        body = re.sub(r"loop\[[^\[\]]+\]", "loop[n]", body, count=1)
    return body


def _integer(w: Writer, depth: int) -> tuple[str, str, Release]:
    """An `int` query (a count or a clamped sum of the int column) released
    with integer noise (issue 29)."""
    r = w.name("r")
    body = w.pick([f"size {w.bag('db', depth - 1)}",
                   f"sum[0, 3] (map (fun {r} -> {r}.k) {w.bag('db', depth - 1)})",
                   f"size {w.bag('db', depth - 1)} - size {w.bag('db', depth - 1)}"])
    if w.chance(0.5):
        release = Release(f"def m (db : bag R) : fuzzy int = geometric[{w.pick(['1', '0.5', '2', '1 / 3'])}] (q db);",
                          "geometric")
    else:
        release = Release(f"def m (db : bag R) : fuzzy int = dgauss[{w.pick(['1', '0.5', '40', '3 / 7'])}] (q db);",
                          "dgauss")
    return "int", body, release


def _release_of_number(w: Writer) -> Release:
    eps = w.pick(EPSILONS)
    choice = w.draw(st.integers(0, 12))
    if choice <= 3:
        return Release(f"def m (db : bag R) : fuzzy num = laplace[{eps}] (q db);", "laplace")
    if choice == 12:  # the staircase (issue 29): its noise on its own grid, the same on both neighbours
        gamma = w.pick(["", ", 0.25", ", 1", ", 0"])
        return Release(f"def m (db : bag R) : fuzzy num = staircase[{eps}{gamma}] (q db);", "staircase")
    if choice == 4 and w.chance(0.5):  # calibrated by (eps, delta) for a declared bound (issue 27); FZ305 above it
        bound, delta = w.pick(["1", "2", "100"]), w.pick(_DELTAS)
        return Release(f"def m (db : bag R) : fuzzy num = gauss_dp[{bound}, {eps}, {delta}] (q db);", "gauss")
    if choice == 4:
        return Release(f"def m (db : bag R) : fuzzy num = gauss[{w.pick(['1', '0.5', '1000'])}] (q db);", "gauss")
    if choice == 5:
        rounds = w.pick(["1", "2", "3"])
        return Release(
            f"def m (db : bag R) : fuzzy num =\n  loop[{rounds}] 0 (fun t -> {{ sample x = laplace[{eps}] (q db); return t + x }});",
            "laplace",
        )
    if choice == 6:
        post = w.pick(["x", "clip[0, 10] x", "abs x", "x + y", "x - y", "-x", "max x y"])
        return Release(
            f"def m (db : bag R) : fuzzy num = {{\n  sample x = laplace[{eps}] (q db);\n"
            f"  sample y = laplace[{w.pick(EPSILONS)}] ({w.query('db', 1)});\n  return {post}\n}};",
            "laplace",
        )
    if choice == 7:
        return Release(
            f"def m (db : bag R) : fuzzy (num, num) = {{\n  sample x = laplace[{eps}] (q db);\n"
            f"  sample y = laplace[{w.pick(EPSILONS)}] ({w.query('db', 1)});\n  return (x, y)\n}};",
            "laplace",
        )
    if choice == 8:
        u = w.name("unused")
        return Release(
            f"def m (db : bag R) : fuzzy num = {{\n  let {u} = {w.wild('db', 1)};\n  laplace[{eps}] (q db)\n}};",
            "laplace",
        )
    if choice == 9:
        c = w.name("c")
        return Release(
            f"def m (db : bag R) : fuzzy num =\n  expmech[{eps}] [1, 2, 3] (fun {c} d -> q d + 0 * {c}) db;",
            "outcome",
        )
    if choice == 10:
        return Release(
            f"def m (db : bag R) : fuzzy bool = return (0 * {w.wild('db', 1)} {w.pick(['==', '<', '!='])} 0);",
            "outcome",
        )
    return Release(
        f"def m (db : bag R) : fuzzy num = subsample[{w.pick(['0.5', '1', '0'])}] (fun b -> laplace[{eps}] (q b)) db;",
        "unsynced",
    )


def _number(w: Writer, depth: int) -> tuple[str, str, Release]:
    return "num", w.query("db", depth), _release_of_number(w)


def _pair(w: Writer, depth: int) -> tuple[str, str, Release]:
    body = f"({w.query('db', depth - 1)}, {w.query('db', depth - 1)})"
    eps = w.pick(EPSILONS)
    release = Release(
        f"def m (db : bag R) : fuzzy (num, num) = {{\n  let (x, y) = q db;\n  sample a = laplace[{eps}] x;\n"
        f"  sample b = laplace[{eps}] y;\n  return (a, b)\n}};",
        "laplace",
    )
    return "(num, num)", body, release


def _with(w: Writer, depth: int) -> tuple[str, str, Release]:
    body = f"<{w.query('db', depth - 1)}, {w.query('db', depth - 1)}>"
    side = w.pick(["fst", "snd"])
    release = Release(f"def m (db : bag R) : fuzzy num = laplace[{w.pick(EPSILONS)}] ({side} (q db));", "laplace")
    return "<num & num>", body, release


def _histogram(w: Writer, depth: int) -> tuple[str, str, Release]:
    k = w.pick(["1", "2", "5", "200"])
    body = f"counts (group[{k}] {w.row_fun(w.row_int, 2)} {w.bag('db', depth - 1)})"
    release = Release(f"def m (db : bag R) : fuzzy (vec[1] num) = laplace[{w.pick(EPSILONS)}] (q db);", "laplace")
    return "vec[1] num", body, release


def _list(w: Writer, depth: int) -> tuple[str, str, Release]:
    items = ", ".join(w.query("db", depth - 1) for _ in range(w.draw(st.integers(1, 3))))
    release = Release(f"def m (db : bag R) : fuzzy (list num) = laplace[{w.pick(EPSILONS)}] (q db);", "laplace")
    return "list num", f"[{items}]", release


def _l2(w: Writer, depth: int) -> tuple[str, str, Release]:
    c = w.pick(["1", "0.5", "10", "1e300", "tiny"])
    body = f"vsum[{c}] {w.vec_rows('db', depth - 1)}"
    if w.chance(0.3):
        body = f"clip2[{w.pick(['1', '0.5'])}] ({body})"
    if w.chance(0.2):
        body = f"{w.pick(['2', '0.5', 'zero'])} * ({body})"
    release = Release(f"def m (db : bag R) : fuzzy (vec[2] num) = gauss[{w.pick(['1', '0.5', '100'])}] (q db);", "gauss")
    return "vec[2] num", body, release


def _matrix(w: Writer, depth: int) -> tuple[str, str, Release]:
    """`mat[p] num` (Duet's M_Lp: the rows' Lp distances added): per-bucket
    clipped sums (`vsums`), a literal of queries, entry-wise maps, a row or
    an entry taken back out, a transpose of an L1 matrix, norm conversions."""
    r = w.name("r")
    entries = ", ".join(w.row_num(r, 1) for _ in range(2))
    k = w.pick(["1", "3"])
    c = w.pick(["1", "0.5", "10", "tiny"])
    if w.chance(0.5):
        body = f"vsums[{c}] (fun {r} -> [{entries}]) (group[{k}] {w.row_fun(w.row_int, 1)} {w.bag('db', depth - 1)})"
        norm = "2"
    else:
        row = lambda: f"[{w.query('db', depth - 1)}, {w.pick(['0', 'third', w.query('db', 0)])}]"  # noqa: E731
        norm = w.pick(["1", "2", "inf"])
        body = f"([{row()}, {row()}] : mat[{norm}] num)"
    if w.chance(0.3):
        body = f"mmap (fun x -> {w.pick(['3 * x', 'clip[-1, 1] x', 'x / 4 - 7', 'sigmoid x', '0 * x'])}) ({body})"
    if w.chance(0.2):
        body, norm = f"mtranspose ({body} : mat[1] num)", "1"
    release_norm = w.pick(["1", "2"])
    noise = f"laplace[{w.pick(EPSILONS)}]" if release_norm == "1" else f"gauss[{w.pick(['1', '0.5', '100'])}]"
    model = "laplace" if release_norm == "1" else "gauss"
    if w.chance(0.2):
        index = w.pick(["0", "1"])
        return ("num", f"mentry ({body}) {index} {w.pick(['0', '1'])}",
                Release(f"def m (db : bag R) : fuzzy num = {noise} (q db);", model))
    release = Release(f"def m (db : bag R) : fuzzy (mat[{release_norm}] num) = {noise} (q db);", model)
    return f"mat[{norm}] num", body, release


def _thresholds(w: Writer, depth: int) -> tuple[str, str, Release]:
    count = w.pick(["1", "3", "60"])
    ts = ", ".join(str(i) for i in range(int(count)))
    t = w.name("t")
    r = w.name("r")
    body = f"tabulate [{ts}] (fun {t} -> size (filter (fun {r} -> {r}.a > {t}) {w.bag('db', depth - 1)}))"
    c = w.name("c")
    release = Release(
        f"def m (db : bag R) : fuzzy num = expmech[{w.pick(EPSILONS)}] [0, 1, 2] (fun {c} d -> {w.query('d', 1)}) db;",
        "outcome",
    )
    return "vec[inf] num", body, release


def _zero_bool(w: Writer, depth: int) -> tuple[str, str, Release]:
    body = f"0 * {w.wild('db', depth - 1)} {w.pick(['==', '<', '>='])} {w.pick(['0', '1'])}"
    release = Release("def m (db : bag R) : fuzzy bool = return (q db);", "outcome")
    return "bool", body, release


QUERY_KINDS: tuple[Callable[[Writer, int], tuple[str, str, Release]], ...] = (
    _number, _number, _number, _number, _pair, _with, _histogram, _list, _l2, _thresholds, _zero_bool, _integer,
    _matrix,
)


@st.composite
def programs(draw: Draw) -> Generated:
    return Writer(draw).program()
