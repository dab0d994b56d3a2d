"""Jupyter support: `%load_ext fuzzpy`, then a cell

    %%fuzzpy --name analysis
    type Row = { age : num };
    def noisy_count (db : bag Row) : fuzzy num = laplace[0.1] (size db);

checks the cell's program and verifies its mechanisms, and shows a table:
each definition, its type, each parameter's sensitivity, the privacy cost
in each database with the accounting method, the derivation (folded). A
rejected program shows the diagnostics as the CLI prints them, with no
traceback. ``--name NAME`` binds the `fuzzpy.Program` in the notebook for
later cells (``analysis.run(...)``); ``--delta D`` reports approximate costs
at D. IPython is imported only here, and only by the magic.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fuzzpy.support.records import frozen

if TYPE_CHECKING:
    from fuzzpy.api.reports import CheckReport, DefinitionReport, VerifyResult

CELL_NAME = "<cell>"

_STYLE = (
    "<style>.fuzzpy-report td,.fuzzpy-report th{text-align:left;vertical-align:top;padding:2px 8px}"
    ".fuzzpy-report pre{margin:0;white-space:pre-wrap}</style>"
)


def load_ipython_extension(ipython: Any) -> None:
    """Register the `%%fuzzpy` cell magic (called by `%load_ext fuzzpy`)."""

    def fuzzpy_magic(line: str, cell: str) -> None:
        from IPython.display import display

        shown, program, name = fuzzpy_cell(line, cell)
        if name is not None and program is not None:
            ipython.user_ns[name] = program
        display(shown)

    ipython.register_magic_function(fuzzpy_magic, magic_kind="cell", magic_name="fuzzpy")


def fuzzpy_cell(line: str, cell: str) -> tuple[Any, Any, str | None]:
    """What `%%fuzzpy LINE` shows for ``cell``, the Program (None if
    rejected) and the name to bind it to. Never raises for a bad program."""
    from fuzzpy.api.program import loads
    from fuzzpy.language.diagnostics import FuzzError

    try:
        options = _options(line)
    except ValueError as problem:
        return Failure(f"error: %%fuzzpy {line}: {problem}\nusage: %%fuzzpy [--name NAME] [--delta D]"), None, None
    name = options.get("name")
    try:
        program = loads(cell, name=name or CELL_NAME)
        report = program.check(options.get("delta"))
        verdicts = program.verify()
    except FuzzError as error:
        return Failure(str(error)), None, None
    return CellReport(report, tuple(verdicts)), program, name


def _options(line: str) -> dict[str, Any]:
    words = shlex.split(line)
    options: dict[str, Any] = {}
    while words:
        word = words.pop(0)
        key, _, value = word.partition("=")
        if key not in ("--name", "--delta"):
            raise ValueError(f"unknown option `{word}`")
        if not value:
            if not words:
                raise ValueError(f"{key} needs a value")
            value = words.pop(0)
        if key == "--name" and not value.isidentifier():
            raise ValueError(f"--name takes a Python name, not `{value}`")
        options[key[2:]] = value
    return options


@frozen
class Failure:
    """A rejected cell: the diagnostics as the CLI renders them."""

    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return f'<pre class="fuzzpy-error">{html.escape(self.text)}</pre>'


@frozen
class CellReport:
    """An accepted cell: the check report and the mechanisms' verdicts."""

    report: CheckReport
    verdicts: tuple[VerifyResult, ...] = ()

    def __repr__(self) -> str:
        lines = [self.report.text]
        lines += [verdict.text() for verdict in self.verdicts]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return check_report_html(self.report, self.verdicts, derivations=True)


# ---------------------------------------------------------------- HTML


def check_report_html(report: CheckReport, verdicts: Sequence[VerifyResult] = (), derivations: bool = False) -> str:
    """The report as an HTML table: definition, type, sensitivity per
    parameter, cost per database with its method; the derivation folded in
    a <details> when ``derivations``; then the mechanisms' verdicts."""
    head = ["definition", "type", "sensitivity", "privacy cost"] + (["derivation"] if derivations else [])
    rows = [_definition_row(d, derivations) for d in report.definitions]
    parts = [_STYLE, _table(head, rows, "fuzzpy-report")]
    if any(d.costs for d in report.definitions):  # costs are shown: say for which neighbours
        parts.append(f"<small>{html.escape(report.neighbours.text())}</small>")
    if verdicts:
        rows = [[_code(v.name), html.escape(v.status), _code(v.claim), _folded("proof" if v.proved else "details",
                                                                              "\n".join(v.steps))]
                for v in verdicts]
        parts.append(_table(["mechanism", "verdict", "claim", ""], rows, "fuzzpy-report"))
    elif report.mechanisms:
        rows = [[_code(m.name), _code(m.claim)] for m in report.mechanisms]
        parts.append(_table(["mechanism", "claim"], rows, "fuzzpy-report"))
    for diagnostic in report.diagnostics:
        parts.append(f"<pre>{html.escape(diagnostic.severity)}[{diagnostic.code}]: "
                     f"{html.escape(diagnostic.message)}</pre>")
    return "\n".join(parts)


def _definition_row(d: DefinitionReport, derivations: bool) -> list[str]:
    sensitivity = "<br>".join(f"{_code(p.name)}: {html.escape(p.sensitivity_text)}" for p in d.parameters) or "—"
    costs = "<br>".join(
        f"{_code(name)}: {html.escape(cost.text)} <small>({html.escape(cost.method)})</small>"
        for name, cost in d.costs.items()
    ) or "—"
    if d.checked.static_params:  # a cost over its parameters, a number at each call
        from fuzzpy.checker.report import symbolic_text

        costs = html.escape(symbolic_text(d.checked))
    row = [_code(d.name), _code(d.type), sensitivity, costs]
    if derivations:
        row.append(_folded("derivation", d.derivation))
    return row


def _table(head: list[str], rows: list[list[str]], css: str) -> str:
    header = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


def _folded(summary: str, text: str) -> str:
    if not text:
        return ""
    return f"<details><summary>{html.escape(summary)}</summary><pre>{html.escape(text)}</pre></details>"
