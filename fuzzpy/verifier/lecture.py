"""A proof's loop invariant regrouped in the shape of Gaboardi's lecture.

    regroup(decl, program, base, source, orientation, loop_index, minimise) -> Lecture

The lecture states ROSNM's invariant in three clauses and a cost, in
two-run notation (x<1>, x<2>: x in the run on the input and on its neighbour):

    i<1> < s => (max<1> < s /\\ max<2> < s /\\ |best<1> - best<2>| <= 1)
    /\\ i<1> >= s => ((max<1> = max<2> = s /\\ best<1> + 1 = best<2>) \\/ max<1> != s)
    /\\ i<1> = i<2>                                           (and "paid")

Here a proof's invariant (the prover's clauses, SMT-LIB text in the
certificate) is put in that shape: the public equalities (i<1> = i<2>), the
clause "before s" (the pointwise index below the fixed output s), the
clause "after s" (the lecture's disjunction `(max<1> = s /\\ ...) \\/ max<1> !=
s` for each clause the proof guards by "max<1> = s"), the clauses that hold
in every case, and the cost clause ("paid"). A proof without a pointwise
index (randomness alignment, or a selector that is not "the index equals s")
has no split: public equalities, relational clauses, cost.

Nothing here is trusted, and nothing printed is taken on faith: the
regrouped formula is handed to the proof kernel in place of the loop's
invariant (initiation, consecution, and what the program needs after the
loop are all re-checked) and is shown only when the kernel accepts it. The
clauses are chosen by asking the kernel too: from the prover's clauses in the
lecture's shape (split at i<1> < s first, as the slides do; then at i<1> <= s),
a clause goes only when the kernel still accepts the invariant without it.
When the lecture's own split is not inductive with the proof's clauses the
result says so (`note`), with the kernel's reason.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Union

from fuzzpy.support.records import frozen
from fuzzpy.verifier.kernel.certificate import Certificate, LoopInvariant
from fuzzpy.verifier.text import in_run, wrapped

if TYPE_CHECKING:
    from fuzzpy.language.syntax import MechanismDecl, Program

#: the kernel re-checks at most this many regrouped invariants per loop and split
MAX_LECTURE_CHECKS = 160
#: ... and gives up choosing clauses after this much CPU (what is left is then shown, still checked)
LECTURE_SECONDS = 60.0

Tree = Union[str, list["Tree"]]  # noqa: UP007 - a recursive alias
#: the lecture's connectives, in ASCII
AND, OR = " /\\ ", " \\/ "


@frozen
class Lecture:
    """One loop's invariant in the lecture's shape (texts in two-run notation)."""

    checked: bool  # the kernel accepted `smt` in place of the proof's invariant
    split: str  # "i<1> < s", "i<1> <= s", or "" (no case split at s)
    public: tuple[str, ...]  # equal in both runs: "i<1> = i<2>"
    before: tuple[str, ...]  # under the split ("before s")
    after: tuple[str, ...]  # under its negation ("after s"), the lecture's disjunctions among them
    relational: tuple[str, ...]  # in every case (no split: every relational clause)
    cost: tuple[str, ...]  # "paid <= eps", "i<1> <= s => paid = 0"
    formula: tuple[str, ...]  # the invariant as printed, one group a line
    smt: str  # the SMT-LIB term the kernel checked
    note: str = ""  # the lecture's split rejected, or why there is no regrouping
    minimised: bool = False  # every clause left was shown needed by the kernel


# ---------------------------------------------------------------- s-expressions


def _tokens(text: str) -> list[str]:
    return re.findall(r"\(|\)|\|[^|]*\||[^\s()|]+", text)


def parse(text: str) -> Tree:
    """An SMT-LIB term as nested lists (lets inlined)."""
    tokens = _tokens(text)
    pos = 0

    def read() -> Tree:
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token != "(":
            return token
        items: list[Tree] = []
        while tokens[pos] != ")":
            items.append(read())
        pos += 1
        return items

    return _inline(read(), {})


def _inline(tree: Tree, env: dict[str, Tree]) -> Tree:
    if isinstance(tree, str):
        return env.get(tree, tree)
    if tree and tree[0] == "let" and len(tree) == 3 and isinstance(tree[1], list):
        inner = dict(env)
        for binding in tree[1]:
            assert isinstance(binding, list) and isinstance(binding[0], str)
            inner[binding[0]] = _inline(binding[1], env)
        return _inline(tree[2], inner)
    return [_inline(t, env) for t in tree]


def smt(tree: Tree) -> str:
    if isinstance(tree, str):
        return tree
    return "(" + " ".join(smt(t) for t in tree) + ")"


def _atoms(tree: Tree) -> set[str]:
    if isinstance(tree, str):
        return {tree}
    return set().union(*(_atoms(t) for t in tree)) if tree else set()


def _conjuncts(tree: Tree) -> list[Tree]:
    if isinstance(tree, list) and tree and tree[0] == "and":
        return [c for t in tree[1:] for c in _conjuncts(t)]
    return [tree]


def _and(parts: list[Tree]) -> Tree:
    if not parts:
        return "true"
    return parts[0] if len(parts) == 1 else ["and", *parts]


# ---------------------------------------------------------------- clauses


@frozen
class _Clause:
    guard: Tree | None
    body: Tree
    label: str  # the prover's label of the conjunct it came from
    hint: bool
    order: int


def _clauses(part: Tree, label: str, hint: bool, order: int) -> list[_Clause]:
    """A conjunct as guarded clauses: `(=> G (and B1 B2))` is (G, B1), (G, B2);
    `(or (not G) B)` is (G, B)."""
    if isinstance(part, list) and part and part[0] == "=>" and len(part) == 3:
        return [_Clause(part[1], b, label, hint, order) for b in _conjuncts(part[2])]
    if isinstance(part, list) and len(part) >= 3 and part[0] == "or" and isinstance(part[1], list) \
            and part[1] and part[1][0] == "not":
        rest = part[2:]
        body: Tree = rest[0] if len(rest) == 1 else ["or", *rest]
        return [_Clause(part[1][1], b, label, hint, order) for b in _conjuncts(body)]
    return [_Clause(None, b, label, hint, order) for b in _conjuncts(part)]


LT, EQ, GT = "lt", "eq", "gt"
ALL = frozenset({LT, EQ, GT})
_CASES = {"<": {LT}, "<=": {LT, EQ}, "=": {EQ}, ">": {GT}, ">=": {EQ, GT}, "distinct": {LT, GT}}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "distinct": "distinct"}


def _strip(tree: Tree) -> Tree:
    while isinstance(tree, list) and len(tree) == 2 and tree[0] == "to_real":
        tree = tree[1]
    return tree


def _index_cases(guard: Tree | None, index: str) -> frozenset[str] | None:
    """The cases of `index` against s that ``guard`` is (None: not such a test)."""
    if guard is None or isinstance(guard, str):
        return None
    if guard[0] == "not" and len(guard) == 2:
        inner = _index_cases(guard[1], index)
        return None if inner is None else ALL - inner
    if guard[0] == "and":
        found = [_index_cases(g, index) for g in guard[1:]]
        if any(f is None for f in found):
            return None
        out = ALL
        for f in found:
            assert f is not None
            out = out & f
        return out
    if len(guard) == 3 and guard[0] in _CASES:
        left, right = _strip(guard[1]), _strip(guard[2])
        if left == index and right == "%s":
            return frozenset(_CASES[str(guard[0])])
        if left == "%s" and right == index:
            return frozenset(_CASES[_FLIP[str(guard[0])]])
    return None


def _case_guard(cases: frozenset[str], index: str) -> Tree:
    op = {frozenset({LT}): "<", frozenset({LT, EQ}): "<=", frozenset({EQ}): "=", frozenset({GT}): ">",
          frozenset({EQ, GT}): ">=", frozenset({LT, GT}): "distinct"}[cases]
    return [op, index, "%s"]


def _is_public(clause: _Clause) -> bool:
    if clause.guard is not None:
        return False
    body = clause.body
    if not isinstance(body, list) or len(body) != 3 or body[0] != "=":
        return False
    for diff, zero in ((body[1], body[2]), (body[2], body[1])):
        diff = _strip(diff)
        if _number(_strip(zero)) == 0 and isinstance(diff, list) and len(diff) == 3 and diff[0] == "-":
            a, b = _strip(diff[1]), _strip(diff[2])
            if isinstance(a, str) and isinstance(b, str) and a.endswith(".2") and b == a[:-2] + ".1":
                return True
    a, b = _strip(body[1]), _strip(body[2])
    return isinstance(a, str) and isinstance(b, str) and {a[-2:], b[-2:]} == {".1", ".2"} and a[:-2] == b[:-2]


def _is_cost(clause: _Clause) -> bool:
    return any(a.startswith("%cost") for a in _atoms(clause.body) | (_atoms(clause.guard) if clause.guard else set()))


def _mentions_s(tree: Tree | None) -> bool:
    return tree is not None and "%s" in _atoms(tree)


# ---------------------------------------------------------------- items: what a regrouping keeps or drops


@frozen
class _Item:
    group: str  # public | before | after | disjunction | every | cost
    conjuncts: tuple[str, ...]  # SMT-LIB, already guarded for its place
    trees: tuple[Tree, ...]
    guard: Tree | None  # the guard shown (cost, disjunction, every)
    body: tuple[Tree, ...]
    label: str
    hint: bool
    rank: int  # the lower, the earlier it is tried for dropping
    order: int


_GROUP_RANK = {"every": 0, "partial": 1, "after": 2, "disjunction": 3, "before": 4, "cost": 5, "public": 6}


def _op_rank(group: str, body: Tree) -> int:
    """Among clauses of one group, which to keep (higher: kept longer). Before and
    after s: strict comparisons and the lecture's relational forms over `!=`; in
    every case: a bound by a constant (`i<1> >= 1`) over a relation between two
    variables (`max<1> < i<1>`), which would stand in for the lecture's case split."""
    if not isinstance(body, list) or not body:
        return 1
    if group == "every":
        return 3 if len(body) == 3 and any(_number(b) is not None for b in body[1:]) else 0
    if body[0] in ("<", ">"):
        return 3
    if body[0] == "=":
        return 2
    if body[0] == "distinct":
        return 0
    return 1


def _item(group: str, trees: list[Tree], guard: Tree | None, body: list[Tree], clause: _Clause,
          partial: bool = False) -> _Item:
    rank = _GROUP_RANK["partial" if partial else group] * 10 + _op_rank(group, body[0] if body else "")
    return _Item(group, tuple(smt(t) for t in trees), tuple(trees), guard, tuple(body), clause.label, clause.hint,
                 rank, clause.order)


def _pair_abs(clauses: list[_Clause], placed: bool = False) -> list[tuple[_Clause, list[Tree]]]:
    """`d <= c` and `d >= -c` under one guard (``placed``: clauses already placed
    in one case of the split): one item (shown `|d| <= c`)."""
    out: list[tuple[_Clause, list[Tree]]] = []
    used: set[int] = set()
    for k, c in enumerate(clauses):
        if k in used:
            continue
        b = c.body
        if isinstance(b, list) and len(b) == 3 and b[0] == "<=":
            bound = _number(b[2])
            for j in range(k + 1, len(clauses)):
                d = clauses[j]
                if j in used or not placed and d.guard != c.guard:
                    continue
                e = d.body
                if isinstance(e, list) and len(e) == 3 and e[0] == ">=" and e[1] == b[1] and bound is not None \
                        and _number(e[2]) == -bound:
                    used.add(j)
                    out.append((c, [b, e]))
                    break
            else:
                out.append((c, [b]))
            continue
        out.append((c, [b]))
    return out


def _items(clauses: list[_Clause], index: str | None, before: frozenset[str], strict: bool,
           every: bool, after_plain: bool) -> list[_Item]:
    """The clauses placed for the split `before` (the index cases under it) and
    filtered for a stage of the search; hints always come along."""
    after = ALL - before
    by_cases: dict[tuple[str, str], tuple[frozenset[str], _Clause]] = {}
    rest: list[_Clause] = []
    for c in clauses:
        cases = _index_cases(c.guard, index) if index else None
        if cases is not None and not _is_cost(c):
            key = (smt(c.body), str(c.hint))
            seen = by_cases.get(key)
            by_cases[key] = (cases | seen[0], seen[1]) if seen else (cases, c)
        else:
            rest.append(c)
    items: list[_Item] = []
    for region, group in ((before, "before"), (after, "after")):
        if index is None:
            continue
        placed = [(cases & region, c) for cases, c in by_cases.values() if cases & region]
        for shared in dict.fromkeys(p[0] for p in placed):
            partial = shared != region
            guard = _case_guard(shared, index) if partial else None
            for c, bodies in _pair_abs([c for p, c in placed if p == shared], True):
                if not c.hint and (group == "after" and not after_plain or partial and strict):
                    continue
                trees: list[Tree] = [b if guard is None else ["=>", guard, b] for b in bodies]
                items.append(_item(group, trees, guard, bodies, c, partial))
    plain = [c for c in rest if not _is_cost(c)]
    for c, bodies in _pair_abs([c for c in plain if c.guard is None]):
        if _is_public(c):
            items.append(_item("public", bodies, None, bodies, c))
        elif every or c.hint or index is None:
            items.append(_item("every", bodies, None, bodies, c))
    for c, bodies in _pair_abs([c for c in plain if c.guard is not None]):
        condition = c.guard
        assert condition is not None
        trees = [["=>", condition, b] for b in bodies]
        if index is not None and _mentions_s(c.guard):
            # the lecture's "after s" disjunction; a copy for every case the search may drop
            items.append(_item("disjunction", trees, c.guard, bodies, c))
            if every:
                items.append(_item("every", trees, c.guard, bodies, c))
        elif every or c.hint or index is None:
            items.append(_item("every", trees, c.guard, bodies, c))
    costs: dict[str, tuple[frozenset[str] | None, _Clause]] = {}
    for c in clauses:
        if not _is_cost(c):
            continue
        cases = _index_cases(c.guard, index) if index else None
        cost_key = smt(c.body) if cases is not None or c.guard is None else smt(["=>", c.guard, c.body])
        seen_cost = costs.get(cost_key)
        if cases is not None and seen_cost is not None and seen_cost[0] is not None:
            cases = cases | seen_cost[0]
        costs[cost_key] = (cases, seen_cost[1] if seen_cost else c)
    for cases, c in costs.values():
        if cases is not None and index is not None:
            guard = None if cases == ALL else _case_guard(cases, index)
            tree = c.body if guard is None else ["=>", guard, c.body]
            items.append(_item("cost", [tree], guard, [c.body], c))
        else:
            tree = c.body if c.guard is None else ["=>", c.guard, c.body]
            items.append(_item("cost", [tree], c.guard, [c.body], c))
    return items


def formula(items: list[_Item], split: Tree | None) -> Tree:
    """The regrouped invariant as one SMT-LIB term."""
    groups: dict[str, list[Tree]] = {}
    for item in items:
        groups.setdefault(item.group, []).extend(item.trees)
    parts: list[Tree] = list(groups.get("public", []))
    if split is not None:
        if groups.get("before"):
            parts.append(["=>", split, _and(groups["before"])])
        after = groups.get("after", []) + groups.get("disjunction", [])
        if after:
            parts.append(["=>", ["not", split], _and(after)])
    parts += groups.get("every", []) + groups.get("cost", [])
    return _and(parts)


# ---------------------------------------------------------------- the lecture's notation


_PREC = {"=>": 1, "or": 2, "and": 3, "not": 4}


def _number(tree: Tree) -> float | None:
    tree = _strip(tree)
    if isinstance(tree, str):
        try:
            return float(tree)
        except ValueError:
            return None
    if len(tree) == 2 and tree[0] == "-":
        inner = _number(tree[1])
        return None if inner is None else -inner
    if len(tree) == 3 and tree[0] == "/":
        a, b = _number(tree[1]), _number(tree[2])
        return None if a is None or b is None or b == 0 else a / b
    return None


def _num_text(tree: Tree) -> str | None:
    tree = _strip(tree)
    if isinstance(tree, str) and re.fullmatch(r"\d+(\.0+)?", tree):
        return tree.split(".")[0]
    if isinstance(tree, str) and re.fullmatch(r"\d+\.\d+", tree):
        return tree
    if isinstance(tree, list) and len(tree) == 2 and tree[0] == "-":
        inner = _num_text(tree[1])
        return None if inner is None else f"-{inner}"
    if isinstance(tree, list) and len(tree) == 3 and tree[0] == "/":
        a, b = _num_text(tree[1]), _num_text(tree[2])
        return None if a is None or b is None else f"{a}/{b}"
    return None


class Unshown(Exception):
    """A term outside the vocabulary this notation prints."""


def _name(atom: str) -> str:
    if atom.startswith("@"):  # a public parameter: the same in both runs
        return atom[1:]
    if atom == "%s":
        return "s"
    if atom == "%cost":
        return "paid"
    if atom == "%cost.entry":
        return "paid0"
    if atom.startswith("%len."):
        return f"len({atom[5:]})"
    if atom.startswith("%") or atom.startswith("|"):
        raise Unshown(atom)
    m = re.fullmatch(r"(.+)\.(1|2|entry)", atom)
    if m is not None:  # x<1>, x<2>; x<entry>: run 1's value when the loop was entered
        return in_run(m.group(1), m.group(2))
    number = _num_text(atom)
    if number is not None:
        return number
    if atom in ("true", "false"):
        return atom
    raise Unshown(atom)


def _diff_of_runs(tree: Tree) -> str | None:
    """`(- x.2 x.1)` as `x`."""
    tree = _strip(tree)
    if isinstance(tree, list) and len(tree) == 3 and tree[0] == "-":
        a, b = _strip(tree[1]), _strip(tree[2])
        if isinstance(a, str) and isinstance(b, str) and a.endswith(".2") and b == a[:-2] + ".1":
            return a[:-2]
    return None


def _abs_of(tree: Tree) -> Tree | None:
    """`(ite (>= d 0) d (- d))` as d."""
    tree = _strip(tree)
    if isinstance(tree, list) and len(tree) == 4 and tree[0] == "ite" and isinstance(tree[1], list) \
            and tree[1][0] == ">=" and tree[1][1] == tree[2] and _number(tree[1][2]) == 0 \
            and tree[3] == ["-", tree[2]]:
        return tree[2]
    return None


def show(tree: Tree, outer: int = 0) -> str:
    """An invariant term in the lecture's notation: x1 / x2, = != <=, /\\ \\/ =>."""
    tree = _strip(tree)
    if isinstance(tree, str):
        return _name(tree)
    number = _num_text(tree)
    if number is not None:
        return number
    head, args = tree[0], tree[1:]
    if head == "-" and len(args) == 2 and _number(args[0]) == 1 and isinstance(args[1], str) \
            and args[1].startswith("%remaining."):
        return f"used({args[1][len('%remaining.'):]})"  # the share of the vec[1] budget read so far
    if head in ("and", "or"):
        level = _PREC["and"] + 1  # (a /\\ b) \\/ c: the lecture's brackets
        text = (AND if head == "and" else OR).join(show(a, level) for a in args)
        return f"({text})" if outer > _PREC[str(head)] else text
    if head == "=>":
        text = f"{show(args[0], 2)} => {show(args[1], 1)}"
        return f"({text})" if outer > 1 else text
    if head == "not":
        inner = _strip(args[0])
        if isinstance(inner, list) and len(inner) == 3 and inner[0] in ("=", "<", "<=", ">", ">=", "distinct"):
            negated = {"=": "distinct", "distinct": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}[str(inner[0])]
            return show([negated, inner[1], inner[2]], outer)
        return f"!({show(inner)})"
    if head in ("=", "distinct", "<", "<=", ">", ">=") and len(args) == 2:
        return _comparison(str(head), args[0], args[1])
    absolute = _abs_of(tree) if head == "ite" else None
    if absolute is not None:
        return _abs_text(absolute)
    if head == "ite":
        return f"({show(args[0])} ? {show(args[1])} : {show(args[2])})"
    if head == "+":
        # x1 + (x2 - x1) is x2 (a hint's `max + dist(max)`)
        diff = _strip(args[1]) if len(args) == 2 else ""
        if _diff_of_runs(diff) is not None and _strip(args[0]) == _strip(diff[2]):
            return show(_strip(diff[1]), outer)
        text = " + ".join(show(a, 6) for a in args)
        return f"({text})" if outer > 5 else text
    if head == "-" and len(args) == 1:
        return f"-{show(args[0], 8)}"
    if head == "-":
        text = f"{show(args[0], 6)} - {show(args[1], 7)}"
        return f"({text})" if outer > 5 else text
    if head in ("*", "/"):
        text = show(args[0], 7) + "".join(f" {head} {show(a, 8)}" for a in args[1:])
        return f"({text})" if outer > 7 else text
    raise Unshown(str(head))


def _abs_text(inner: Tree) -> str:
    name = _diff_of_runs(inner)
    if name is not None:
        return f"|{_name(name + '.1')} - {_name(name + '.2')}|"
    return f"|{show(inner)}|"


_SYMBOL = {"=": "=", "distinct": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _comparison(op: str, left: Tree, right: Tree) -> str:
    left, right = _strip(left), _strip(right)
    if _num_text(left) is not None and _num_text(right) is None:  # constants on the right
        left, right, op = right, left, _FLIP[op]
    name = _diff_of_runs(left)
    k = _number(right)
    if name is not None and k is not None and op == "=":
        one, two = _name(name + ".1"), _name(name + ".2")
        if k == 0:
            return f"{one} = {two}"
        amount = _num_text(right) or str(k)
        return f"{one} + {amount} = {two}" if k > 0 else f"{two} + {amount.lstrip('-')} = {one}"
    if name is not None and op in ("<=", "<", ">=", ">"):
        return f"{_name(name + '.2')} - {_name(name + '.1')} {_SYMBOL[op]} {show(right, 6)}"
    if op == "=" and isinstance(left, list) and isinstance(right, list) and left[0] == "=" and right[0] == "=":
        return f"({show(left)}) <=> ({show(right)})"
    return f"{show(left, 5)} {_SYMBOL[op]} {show(right, 5)}"


def _item_text(item: _Item, label_text: Callable[[str], str]) -> str:
    try:
        if len(item.body) == 2:  # d <= c and d >= -c
            bound = show(item.body[0][2]) if isinstance(item.body[0], list) else "?"
            inner = item.body[0][1] if isinstance(item.body[0], list) else item.body[0]
            text = f"{_abs_text(inner)} <= {bound}"
        else:
            text = show(item.body[0], 2)
        if item.guard is not None and item.group in ("cost", "every", "before", "after"):
            return f"{show(item.guard, 2)} => {text}"
        return text
    except Unshown:
        return label_text(item.label)


def _disjunctions(items: list[_Item], label_text: Callable[[str], str]) -> list[str]:
    """Clauses guarded by `y1 = s` (and maybe more) as the lecture writes them:
    (y1 = s /\\ ...) \\/ y1 != s."""
    keyed: dict[str, list[_Item]] = {}
    for item in items:
        guard = item.guard
        first = _conjuncts(guard)[0] if guard is not None else "true"
        keyed.setdefault(smt(first), []).append(item)
    out = []
    for key, group in keyed.items():
        first = parse(key)
        try:
            parts: list[str] = []
            for item in group:
                rest = _conjuncts(item.guard)[1:] if item.guard is not None else []
                text = (f"{_abs_text(item.body[0][1])} <= {show(item.body[0][2])}"
                        if len(item.body) == 2 else show(item.body[0], 4))
                parts.append(f"({show(_and(rest), 2)} => {text})" if rest else text)
            negated = show(["not", first], 3)
            chain = _chain(first, parts)
            joined = AND.join(chain)
            out.append((f"({joined})" if len(chain) > 1 else joined) + f"{OR}{negated}")
        except Unshown:
            out += [label_text(item.label) for item in group]
    return out


def _chain(first: Tree, parts: list[str]) -> list[str]:
    """`max<1> = s` and `max<2> = s` as the lecture's `max<1> = max<2> = s`."""
    head = show(first, 4)
    m = re.fullmatch(r"(\w+)<1> = (\w+)", head)
    if m is not None and f"{m.group(1)}<2> = {m.group(2)}" in parts:
        rest = [p for p in parts if p != f"{m.group(1)}<2> = {m.group(2)}"]
        return [f"{m.group(1)}<1> = {m.group(1)}<2> = {m.group(2)}", *rest]
    return [head, *parts]


def _sorted(items: list[_Item]) -> list[_Item]:
    """s and the runs' relation first (the lecture's order), then the prover's."""
    return sorted(items, key=lambda i: (not any("%s" in c for c in i.conjuncts), i.order))


def _publicise(tree: Tree, public: set[str]) -> Tree:
    """Run 1's copy of a public parameter (`eps.1`) shown as the parameter (`eps`)."""
    if isinstance(tree, str):
        m = re.fullmatch(r"(.+)\.[12]", tree)
        return f"@{m.group(1)}" if m is not None and m.group(1) in public else tree
    return [_publicise(t, public) for t in tree]


def _present(items: list[_Item], split: Tree | None, label_text: Callable[[str], str], public: set[str]
             ) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...], str]:
    items = [dataclasses.replace(i, guard=None if i.guard is None else _publicise(i.guard, public),
                                 body=tuple(_publicise(b, public) for b in i.body)) for i in items]
    # a clause kept in every case implies its copy under "after s": shown once (review s29b,
    # a hint's clause printed twice); the text stays equivalent to the term the kernel checked
    def key(i: _Item) -> tuple[str, ...]:
        return (i.label, smt(i.guard) if i.guard is not None else "", *(smt(b) for b in i.body))

    everywhere = {key(i) for i in items if i.group == "every"}
    items = [i for i in items if i.group != "disjunction" or key(i) not in everywhere]
    by: dict[str, list[_Item]] = {}
    for item in _sorted(items):
        by.setdefault(item.group, []).append(item)
    texts = {g: tuple(_item_text(i, label_text) for i in by.get(g, [])) for g in
             ("public", "before", "after", "every", "cost")}
    disjunctions = tuple(_disjunctions(by.get("disjunction", []), label_text))
    texts["after"] = texts["after"] + disjunctions
    split_text = show(split) if split is not None else ""
    lines: list[str] = []

    def add(text: str) -> None:
        lines.append(("   " if not lines else "/\\ ") + text)

    def group(parts: tuple[str, ...]) -> str:
        if len(parts) == 1:
            return parts[0]
        return AND.join(f"({p})" if (" => " in p or OR in p) and not wrapped(p) else p for p in parts)

    if texts["public"]:
        add(group(texts["public"]))
    if split is not None:
        if texts["before"]:
            add(f"{split_text} => ({group(texts['before'])})")
        if texts["after"]:
            add(f"{show(['not', split])} => ({group(texts['after'])})")
    if texts["every"]:
        add(group(texts["every"]))
    if texts["cost"]:
        add(group(texts["cost"]))
    return texts, tuple(lines), split_text


# ---------------------------------------------------------------- the search, checked by the kernel


def _with_invariant(cert: Certificate, orientation: str, loop_index: int, term: str,
                    labels: tuple[str, ...]) -> Certificate:
    sides = []
    for side in cert.sides:
        if side.orientation != orientation:
            sides.append(side)
            continue
        loops = list(side.loops)
        loops[loop_index] = LoopInvariant(loops[loop_index].at, term, labels)
        sides.append(dataclasses.replace(side, loops=tuple(loops)))
    return dataclasses.replace(cert, sides=tuple(sides))


def _source_clauses(inv: LoopInvariant, hints: set[str]) -> list[_Clause] | None:
    from fuzzpy.verifier.game import _conjuncts as top_level

    parts = top_level(inv.invariant)
    if len(parts) != len(inv.labels):
        return None
    out: list[_Clause] = []
    for k, (part, label) in enumerate(zip(parts, inv.labels, strict=True)):
        out += _clauses(parse(part), label, label in hints, k)
    return out


def _pointwise_index(cert: Certificate, orientation: str) -> str | None:
    side = next(s for s in cert.sides if s.orientation == orientation)
    tests = {d.test for d in side.draws if d.selector == "pointwise"}
    if cert.rule != "pointwise" or len(tests) != 1:
        return None
    test = next(iter(tests))
    return f"{test}.1" if re.fullmatch(r"[A-Za-z_]\w*", test) else None


def _split_trees(clauses: list[_Clause], index: str) -> tuple[Tree, Tree] | None:
    """`index < s` and `index <= s` with the operands as the proof writes them (their sorts)."""
    for c in clauses:
        for guard in _conjuncts(c.guard) if c.guard is not None else []:
            if isinstance(guard, list) and len(guard) == 3 and _index_cases(guard, index) is not None \
                    and guard[0] in _CASES:
                left, right = (guard[1], guard[2]) if _strip(guard[1]) == index else (guard[2], guard[1])
                return ["<", left, right], ["<=", left, right]
    return None


def _reason(text: str) -> str:
    """The kernel's rejection, short: the obligation and its line."""
    head = text.split(" fails on the path")[0]
    m = re.fullmatch(r"(.*) \(line (\d+)\)", head)
    return f"`{m.group(1)}` fails, line {m.group(2)}" if m else head[:160]


def failed_obligation(text: str, loop_line: int) -> str:
    """Why the kernel rejects an invariant of the loop at ``loop_line``, read
    from the obligation it reports (fuzzpy.verifier.kernel.product): it does not
    hold on entry (initiation), one more trip does not keep it (consecution),
    what follows the loop does not follow from it (post), or a trip's own
    obligation does not (issue 30 review: a fixed "is not inductive" was printed
    whatever failed). Completes `the invariant ...`."""
    m = re.match(r"(?s)(?:z3 could not decide `(.*)` \(line (\d+)\) on the path \[(.*)\]|"
                 r"(.*) \(line (\d+)\) fails on the path \[(.*)\])", text)
    if m is None:
        return f"is rejected by the kernel ({text[:160]})"
    undecided = m.group(1) is not None
    ob, line, trail = (m.group(1), m.group(2), m.group(3)) if undecided else (m.group(4), m.group(5), m.group(6))
    verdict = "is not decided by z3" if undecided else "fails"
    where = f"`{ob}` {verdict}, line {line}"
    if ob == "the loop invariant holds on entry" and line == str(loop_line):
        return f"does not hold when the loop is entered (initiation: {where})"
    if ob == "the trip preserves the loop invariant" and line == str(loop_line):
        return f"is not inductive: one more trip does not keep it (consecution: {where})"
    if f"line {loop_line}: the loop ends" in trail:
        return f"holds at the loop's exit but is too weak for what follows it (post: {where})"
    if f"line {loop_line}: the loop head" in trail:
        return f"is too weak for the obligations of a trip (inside the loop: {where})"
    return f"is rejected by the kernel ({where})"


def regroup(decl: MechanismDecl, program: Program | None, base: Certificate, source: Certificate,
            orientation: str, loop_index: int, minimise: bool, hints: set[str], mine_minimal: bool = False
            ) -> tuple[Lecture, Certificate]:
    """The loop's invariant in the lecture's shape, and the certificate the
    kernel accepted with it (``base`` with this loop's invariant replaced).
    ``source``'s invariant (the prover's, every clause) is where clauses are
    chosen from when ``minimise``; otherwise ``base``'s clauses are regrouped as
    they are (one kernel check)."""
    from fuzzpy.language.syntax import TyVec, VarDecl
    from fuzzpy.verifier.game import _statements, _two_runs
    from fuzzpy.verifier.kernel import check

    names = {p.name for p in decl.params} | {s.name for s in _statements(decl.body) if isinstance(s, VarDecl)}
    public = _public_parameters(decl)

    vectors = {p.name for p in decl.params if isinstance(p.type, TyVec)}

    def label_text(label: str) -> str:
        shown = label.replace("COST", "paid").replace("V0", "paid0").replace("param_", "")
        text = label if label in hints else _two_runs(shown, names - public - vectors)
        return text.replace(" ==> ", " => ").replace(" == ", " = ").replace("&&", "/\\").replace("||", "\\/")

    checks = 0
    mine = next(s for s in base.sides if s.orientation == orientation).loops[loop_index]
    origin = next(s for s in source.sides if s.orientation == orientation).loops[loop_index]
    index = _pointwise_index(base, orientation)
    # a split at s chooses its clauses anew from the prover's; otherwise the
    # kernel's own minimal clauses are regrouped as they are
    pool_from = origin if minimise and index is not None else mine
    clauses = _source_clauses(pool_from, hints)
    empty = Lecture(False, "", (), (), (), (), (), (), "", "")
    if clauses is None:
        return dataclasses.replace(empty, note="the invariant's clauses are not labelled one by one"), base
    splits = _split_trees(clauses, index) if index else None
    if splits is None:
        index = None

    def accepted(items: list[_Item], split: Tree | None) -> tuple[bool, str, Certificate]:
        nonlocal checks
        checks += 1
        term = smt(formula(items, split))
        labels = tuple(c for item in items for c in item.conjuncts)
        candidate = _with_invariant(base, orientation, loop_index, term, labels)
        decision = check(decl, program, candidate)
        return decision.accepted, decision.reason, candidate

    def finish(items: list[_Item], split: Tree | None, cert: Certificate, note: str, minimal: bool
               ) -> tuple[Lecture, Certificate]:
        texts, lines, split_text = _present(items, split, label_text, public)
        term = smt(formula(items, split))
        return Lecture(True, split_text, texts["public"], texts["before"], texts["after"], texts["every"],
                       texts["cost"], lines, term, note, minimal), cert

    if index is None or splits is None:
        items = _items(clauses, None, frozenset(), False, True, True)
        ok, reason, cert = accepted(items, None)
        if not ok:  # regrouping the checked clauses is an equivalence: a rejection is a bug here
            return dataclasses.replace(empty, note=f"the kernel rejects the regrouped clauses ({_reason(reason)})"), base
        return finish(items, None, cert, "", minimise and mine_minimal)

    # the lecture's own shape, split as the slides split (at i<1> < s): its note when rejected
    lecture_reason = ""
    if minimise:
        strict = _items(clauses, index, frozenset({LT}), True, False, False)
        ok, reason, _cert = accepted(strict, splits[0])
        lecture_reason = "" if ok else failed_obligation(reason, mine.at.line)
    found = []
    for before, split in ((frozenset({LT}), splits[0]), (frozenset({LT, EQ}), splits[1])):
        # every clause of the proof, placed for this split: the proof's invariant itself, regrouped
        items = _items(clauses, index, before, False, True, True)
        ok, _reason_text, cert = accepted(items, split)
        if not ok:
            continue
        minimal = False
        if minimise:
            items, cert, minimal = _shrink(items, split, accepted, cert, frozenset(mine.labels))
        found.append((_score(items, before), before, items, split, cert, minimal))
        if not minimise:
            break
    if not found:
        return dataclasses.replace(empty, note="the kernel rejects every regrouping tried"), base
    score, before, items, split, cert, minimal = min(found, key=lambda f: f[0])
    note = _split_note(score, before, index, lecture_reason) if lecture_reason and score[:2] != (0, 0) or \
        lecture_reason and before != frozenset({LT}) else ""
    return finish(items, split, cert, note, minimal)


def _score(items: list[_Item], before: frozenset[str]) -> tuple[int, int, int, int]:
    """The more lecture-like regrouping is less: fewer clauses outside the
    before/after split, fewer nested case guards, fewer clauses, the slides' split."""
    every = sum(1 for i in items if i.group == "every")
    partial = sum(1 for i in items if i.group in ("before", "after") and i.guard is not None)
    return every, partial, len(items), 0 if before == frozenset({LT}) else 1


def _public_parameters(decl: MechanismDecl) -> set[str]:
    """Scalar parameters no `dist(x)` of the `requires` names: equal in both runs."""
    from fuzzpy.language.syntax import Dist, TyVec, Var
    from fuzzpy.verifier.walk import sub_expressions

    private = {e.expr.name for r in decl.requires for e in sub_expressions(r)
               if isinstance(e, Dist) and isinstance(e.expr, Var)}
    return {p.name for p in decl.params if not isinstance(p.type, TyVec) and p.name not in private}


def _split_note(score: tuple[int, int, int, int], before: frozenset[str], index: str, reason: str) -> str:
    name = index[:-2]
    how = []
    if before != frozenset({LT}):
        how.append(f"split at {in_run(name, 1)} <= s / {in_run(name, 1)} > s")
    if score[0]:
        how.append("with clauses that hold in every case")
    if score[1]:
        how.append("with clauses for one case of the index")
    one = in_run(name, 1)
    return (f"the lecture's shape ({one} < s => before /\\ {one} >= s => the disjunction, paid) with this proof's "
            f"clauses {reason}; shown, a version the kernel accepts: {', '.join(how) or 'regrouped'}")


def _shrink(items: list[_Item], split: Tree | None,
            accepted: Callable[[list[_Item], Tree | None], tuple[bool, str, Certificate]],
            start: Certificate, needed: frozenset[str] = frozenset()) -> tuple[list[_Item], Certificate, bool]:
    started = time.process_time()
    checks = 0
    """Drop every item the kernel does not need (``start``: the certificate with
    them all, accepted): blocks by group, halved when
    needed (delta debugging, Zeller 2002), then one by one until none can go.
    The lecture's clauses are tried last; hints never go."""
    order = sorted(range(len(items)), key=lambda k: (items[k].rank, -items[k].order))
    keep = set(range(len(items)))
    fixed = {k for k in keep if items[k].hint}
    cert = start

    def spent() -> bool:
        return checks >= MAX_LECTURE_CHECKS or time.process_time() - started > LECTURE_SECONDS

    def trial(drop: set[int]) -> bool:
        nonlocal cert, checks
        checks += 1
        kept = [items[k] for k in sorted(keep - drop)]
        good, _, candidate = accepted(kept, split)
        if good:
            cert = candidate
        return good

    groups: dict[int, list[int]] = {}
    for k in order:
        if k not in fixed:
            groups.setdefault(items[k].rank // 10, []).append(k)
    queue = [groups[g] for g in sorted(groups)]
    # first, in one block, the clauses outside the lecture's groups that the kernel's
    # own minimal invariant does without (most of the prover's; one check when it goes)
    first = [k for k in order if k not in fixed and items[k].label not in needed
             and items[k].group not in ("before", "public")]
    if first:
        queue.insert(0, first)
    complete = True
    while queue:
        if spent():
            complete = False
            break
        block = [k for k in queue.pop(0) if k in keep]
        if not block:
            continue
        if trial(set(block)):
            keep -= set(block)
        elif len(block) > 1:
            half = len(block) // 2
            queue[:0] = [block[:half], block[half:]]
    changed = complete
    while changed:
        changed = False
        for k in order:
            if k in keep and k not in fixed:
                if spent():
                    complete = False
                    break
                if trial({k}):
                    keep.discard(k)
                    changed = True
    kept = [items[k] for k in sorted(keep)]
    return kept, cert, complete


__all__ = ["Lecture", "regroup", "formula", "parse", "show", "smt", "MAX_LECTURE_CHECKS"]
