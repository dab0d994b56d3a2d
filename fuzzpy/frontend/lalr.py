"""A lean driver for the LALR(1) automaton lark builds from grammar/fuzz.lark.

lark compiles the grammar into a parse table and into one tree-building
callback per rule (which call `parse_tree.TreeBuilder`). Its own parsing
loop is general (interactive parsing, error recovery, any token class) and
spends much of its time hashing rule objects. This module re-encodes the
same table with plain integers and strings, and runs the textbook LALR loop
over it, with the lexer's context-dependent choices made from the current
state. The automaton, the grammar and the callbacks are lark's, unchanged.

Encoding: ``actions[state][terminal]`` is a state number to shift to
(>= 0) or ``-1 - r`` to reduce by rule r; ``gotos[state][nonterminal]`` is
the state after a reduction; ``rules[r]`` is (length, nonterminal, callback).
A rule that only passes its one child up (``?rule: other``, most of the
precedence chain) has no callback: its reduction just changes the state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import field
from functools import partial
from typing import TYPE_CHECKING, Any

from fuzzpy.frontend.lexer import Tok
from fuzzpy.support.records import frozen

if TYPE_CHECKING:  # lark is needed only to build the tables, not to parse with them (parser.py)
    from lark import Lark

Rule = tuple[int, str, Callable[[list[Any]], Any] | None]


class ParseError(Exception):
    """The automaton cannot continue at `token`; the stacks are as they were then."""

    def __init__(self, token: Tok, states: list[int], values: list[Any]) -> None:
        super().__init__(f"unexpected {token.type} at {token.line}:{token.col}")
        self.token = token
        self.states = states
        self.values = values


@frozen
class Tables:
    start: int
    accept: int
    actions: list[dict[str, int]]  # indexed by state number
    gotos: list[dict[str, int]]
    rules: tuple[Rule, ...]
    # Chains of unit reductions (`?expr: opseq`, `?opseq: unary_e`, ...)
    # depend only on the state below, the state on top and the lookahead:
    # the state each such triple ends in, filled in as the parser meets them.
    unit_chains: dict[tuple[int, int, str], int] = field(default_factory=dict, compare=False)

    @classmethod
    def from_lark(cls, parser: Lark) -> Tables:
        from lark.parse_tree_builder import ExpandSingleChild
        from lark.parsers.lalr_analysis import Shift

        inner = parser.parser.parser.parser  # frontend -> LALR_Parser -> _Parser
        table, callbacks = inner.parse_table, inner.callbacks
        rule_index: dict[Any, int] = {}
        rules: list[Rule] = []
        actions: dict[int, dict[str, int]] = {}
        gotos: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            shifts: dict[str, int] = {}
            jumps: dict[str, int] = {}
            for symbol, (action, argument) in row.items():
                name = str(symbol)
                if action is Shift:
                    (shifts if name.isupper() else jumps)[name] = argument
                    continue
                if argument not in rule_index:
                    rule_index[argument] = len(rules)
                    size, callback = len(argument.expansion), callbacks[argument]
                    passes_child_up = size == 1 and type(callback) is ExpandSingleChild
                    rules.append((size, str(argument.origin.name), None if passes_child_up else _lean(argument, callback)))
                shifts[name] = -1 - rule_index[argument]
            actions[state], gotos[state] = shifts, jumps
        count = max(actions) + 1
        return cls(
            table.start_states["start"], table.end_states["start"],
            [actions.get(state, {}) for state in range(count)],
            [gotos.get(state, {}) for state in range(count)],
            tuple(rules),
        )

    def parse(self, batches: Callable[[Callable[[], dict[str, int]]], Iterator[list[Tok]]]) -> Any:
        """Run the automaton over `batches(current_actions)` (lists of tokens).

        The accepted value, or ParseError.
        """
        actions, gotos, rules = self.actions, self.gotos, self.rules
        state = self.start
        states: list[int] = [state]
        values: list[Any] = []
        unit_chains = self.unit_chains

        def current() -> dict[str, int]:
            return actions[states[-1]]

        token = Tok("$END", "", 0, 0, 1, 1)
        for batch in batches(current):
            for token in batch:
                kind = token.type
                while True:
                    try:
                        action = actions[state][kind]
                    except KeyError:
                        raise ParseError(token, states, values) from None
                    if action >= 0:
                        state = action
                        states.append(state)
                        values.append(token)
                        break
                    size, origin, callback = rules[-1 - action]
                    if callback is None:  # a unit rule: the value stays, the state changes
                        chain = (states[-2], state, kind)
                        state = unit_chains.get(chain, -1)
                        if state < 0:
                            state = unit_chains[chain] = self._unit_chain(*chain)
                        states[-1] = state
                        continue
                    if size:
                        children = values[-size:]
                        del states[-size:]
                        del values[-size:]
                    else:
                        children = []
                    values.append(callback(children))
                    state = gotos[states[-1]][origin]
                    states.append(state)
        return self._finish(states, values, token)

    def _unit_chain(self, below: int, state: int, kind: str) -> int:
        """The state after every unit reduction that `kind` causes on top of `below`."""
        while True:
            action = self.actions[state].get(kind, 0)
            if action >= 0:
                return state
            size, origin, callback = self.rules[-1 - action]
            if callback is not None:
                return state
            state = self.gotos[below][origin]

    def _finish(self, states: list[int], values: list[Any], last: Tok) -> Any:
        """Reduce at the end of the input until the automaton accepts (or cannot)."""
        actions, gotos, rules = self.actions, self.gotos, self.rules
        end = Tok("$END", "", last.end, last.end, last.end_line, last.end_col)
        accept = self.accept
        while True:
            action = actions[states[-1]].get("$END")
            if action is None:
                raise ParseError(end, states, values)
            if action >= 0:  # lark shifts $END only into the accepting state
                return values[-1]
            size, origin, callback = rules[-1 - action]
            if callback is None:
                states[-1] = gotos[states[-2]][origin]
                continue
            if size:
                children = values[-size:]
                del states[-size:]
                del values[-size:]
            else:
                children = []
            values.append(callback(children))
            states.append(gotos[states[-1]][origin])
            if states[-1] == accept:
                return values[-1]

    def acceptable(self, states: list[int]) -> set[str]:
        """The terminals the automaton can really shift next from `states`.

        LALR merges lookaheads, so a state's table row may list terminals
        that would fail after a few reductions; running the reductions on a
        copy of the state stack tells them apart.
        """
        return {name for name in self.actions[states[-1]] if self._accepts(states, name)}

    def _accepts(self, states: list[int], terminal: str) -> bool:
        stack = list(states)
        while True:
            action = self.actions[stack[-1]].get(terminal)
            if action is None:
                return False
            if action >= 0 or stack[-1] == self.accept:
                return True
            size, origin, _ = self.rules[-1 - action]
            if size:
                del stack[-size:]
            stack.append(self.gotos[stack[-1]][origin])
            if stack[-1] == self.accept:
                return terminal == "$END"


def _lean(rule: Any, callback: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """`rule`'s callback, with lark's trees for repetitions replaced by Python lists.

    lark rewrites `x*` and `x+` into helper rules (named `__<rule>_star_<n>`
    or `__<rule>_plus_<n>`) that build a lark `Tree`, and wraps the parent
    rule's callback in a filter that splices that tree's children in place.
    A list spliced the same way gives the parent the same children, without
    building and discarding a tree at every repetition.
    """
    from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders

    if rule.origin.name.startswith("__"):
        return _append_items if rule.expansion[0] == rule.origin else _start_items
    if type(callback) is ChildFilterLALR_NoPlaceholders:
        return partial(_splice, tuple(callback.to_include), callback.node_builder)
    return callback


def _start_items(children: list[Any]) -> list[Any]:
    """`__rep: items` -> the items (a fresh list from the driver)."""
    return children


def _append_items(children: list[Any]) -> list[Any]:
    """`__rep: __rep items` -> the list so far, extended."""
    items: list[Any] = children[0]
    items.extend(children[1:])
    return items


def _splice(
    to_include: tuple[tuple[int, bool], ...], build: Callable[[list[Any]], Any], children: list[Any],
) -> Any:
    """Call `build` with `children`, the repetition lists (`expand` set) spliced in."""
    flat: list[Any] = []
    for index, expand in to_include:
        if expand:
            flat.extend(children[index])
        else:
            flat.append(children[index])
    return build(flat)
