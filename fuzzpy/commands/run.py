"""`fuzzpy run FILE DEF --data PARAM=FILE ...`: release a checked definition's
result on data, under a budget, through the Python API (`fuzzpy.api.program.run_file`;
the steps are in `fuzzpy.release.run`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING

from fuzzpy.commands.common import (
    DELTA_POLICY,
    EXIT_OK,
    EXIT_USAGE,
    print_json,
    report_failure,
)
from fuzzpy.language.diagnostics import FuzzError

if TYPE_CHECKING:
    from fuzzpy.api.releases import Release
    from fuzzpy.release.run import RunResult

DESCRIPTION = (
    "Check the program, quote the definition's privacy cost against each dataset's budget "
    "(refusing with exit 3 before the data is read), check what is public about the data (the "
    "file is its dataset's, unchanged; its format, header and column types, typed on a first run as "
    "`dataset register` types them; exit 2), load the rows, against the columns the definition "
    "reads, under the dataset's row rules (a row that does not fit is dropped or its cell replaced, "
    "silently), charge the ledger, then compute and release the result with exact noise samplers. "
    "Interrupted (Ctrl-C, SIGTERM) before the charge, nothing changes; after it, the ledger keeps "
    "the release as charged, not released (exit 130 / 143)."
)
EPILOG = DELTA_POLICY


def run(args: argparse.Namespace) -> int:
    from fuzzpy.api.program import run_file
    from fuzzpy.language.diagnostics import FuzzError

    progress = _progress(args)

    def show(release: Release) -> None:
        if progress is not None:
            sys.stderr.write("\r\033[K")  # the progress line, cleared before the result
        if args.json:
            print_json(release.to_json())
        else:
            sys.stdout.write(_text(release.result))
        sys.stdout.flush()
        if not release.private:
            sys.stderr.write("note: --seed makes the noise reproducible: this run is NOT differentially private\n")

    try:
        try:
            run_file(args.file, args.definition, on_release=show, on_warning=lambda m: sys.stderr.write(m + "\n"),
                     progress=progress, **_options(args))
        finally:
            if progress is not None:
                sys.stderr.write("\r\033[K")
    except FuzzError as error:  # with the source lines when we have them
        report_failure(args.json, error.diagnostics, getattr(error, "sources", None))
        return error.exit_code
    return EXIT_OK


def _text(result: RunResult) -> str:
    from fuzzpy.ledger.quotes import describe_amount
    from fuzzpy.runtime.values import render

    lines = [f"released:  {render(result.value)}"]
    for receipt in result.receipts:
        origin = result.files.get(receipt.dataset)
        dataset = f"{receipt.dataset}, {origin}" if origin and origin not in receipt.dataset else receipt.dataset
        lines.append(f"charged:   {describe_amount(receipt.cost.spend, receipt.budget)}  (dataset {dataset})")
        lines.append(
            f"remaining: {describe_amount(receipt.remaining, receipt.budget, up=False)} of {receipt.budget.describe()}"
        )
        if receipt.rows_per_person > 1:
            lines.append(_persons_text(receipt.rows_per_person))
    if result.receipts:  # every charge is a cost for these neighbours
        lines.append(result.neighbours_text())
        if any("replace-one" in r.cost.method for r in result.receipts):  # local reports: what LDP means
            from fuzzpy.checker.report import REPLACE_ONE_TEXT

            lines.append(REPLACE_ONE_TEXT)
    else:
        lines.append("charged:   nothing (the result does not depend on any database)")
    lines.extend(_accuracy_lines(result))  # last: a reader of `released:` ... `charged:` sees what it saw
    return "\n".join(lines) + "\n"


def _persons_text(k: int) -> str:
    """The dataset's rows-per-person policy under its charge (review s30a: only the JSON events said it)."""
    return (f"persons:   up to {k} rows per person: charged its group cost over {k} rows "
            "(group privacy, Dwork & Roth 2014, Thm 2.2)")


def _accuracy_lines(result: RunResult) -> list[str]:
    """`accuracy:` lines: one for the whole value, else one per released part."""
    parts = result.accuracy
    if len(parts) == 1 and not parts[0].path:
        return [f"accuracy:  {parts[0].statement()}"]
    return [f"accuracy:  {a.path}: {a.statement()}" for a in parts]


def _pairs(items: list[str] | None, option: str, allow_bare: bool = False,
           names: Callable[[], list[str]] = list) -> dict[str, str]:
    """NAME=VALUE pairs; `names()`: the parameters a bare value may be meant
    for (named in the refusal's hint when there is one)."""
    from fuzzpy.release.run import refuse

    pairs: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep and allow_bare:
            name, value = "", item
        elif not sep:
            error = refuse(EXIT_USAGE, "FZ508", f"{option} expects NAME=VALUE, not `{item}`")
            meant = names()
            hint = (f"name the parameter: {option} {meant[0]}={item}" if len(meant) == 1 else
                    f"name the parameter ({', '.join(meant)}): {option} {meant[0]}={item}" if meant else
                    f"name the parameter: {option} PARAM={item}")
            raise FuzzError(tuple(replace(d, hint=hint) for d in error.diagnostics))
        if name.strip() in pairs:  # the last one silently winning would hide a slip
            raise refuse(EXIT_USAGE, "FZ508", f"{option} gives `{name.strip() or item}` twice")
        pairs[name.strip()] = value
    return pairs


def _bag_parameters(file: str, definition: str) -> list[str]:
    """The bag parameters of `definition` in `file` (for a hint only: [] if
    the program cannot be read or parsed)."""
    from fuzzpy.language.syntax import DefDecl, TyBag
    from fuzzpy.release.pipeline import load_source, parse

    try:
        program = parse(load_source(file))
    except (FuzzError, OSError, ValueError):
        return []
    decl = next((d for d in program.decls if isinstance(d, DefDecl) and d.name == definition), None)
    return [] if decl is None else [p.name for p in decl.params if isinstance(p.type, TyBag)]


def _options(args: argparse.Namespace) -> dict[str, object]:
    """The run's options for the API (`fuzzpy.api.program.run_file`), as the command line gives them."""
    from fuzzpy.api.program import check_seed

    check_seed(args.seed)
    return {
        "data": _pairs(args.data, "--data", names=lambda: _bag_parameters(args.file, args.definition)),
        "args": _pairs(args.arg, "--arg"),
        "budget": args.budget,
        "rule": args.rule,
        "ledger": args.ledger,
        "datasets": _pairs(args.dataset, "--dataset", allow_bare=True),
        "seed": args.seed,
        "delta": args.delta,
        "engine": args.engine,
        "confidence": args.confidence,
        "neighbours": args.neighbours,
        "rows": args.rows,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the fuzzpy program (.fz)")
    parser.add_argument("definition", metavar="DEF", help="the definition whose result is released")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--neighbours", choices=("add-remove-one", "replace-one"), default=None,
                        help="the neighbour relation the charge is for (default: the dataset's, fixed by its "
                        "registration or first charge; add-remove-one for a new dataset)")
    parser.add_argument("--rows", action="append", metavar="N|PARAM=N",
                        help="with --neighbours replace-one: the dataset's public number of rows, N for a "
                        "definition with one bag parameter, else PARAM=N per bag parameter (repeatable; checked "
                        "once loaded; `choose[m]` of it is then charged at the rate m/N)")
    parser.add_argument("--data", action="append", metavar="PARAM=FILE|NAME",
                        help="a registered dataset's name, or a CSV or Parquet file, for a bag parameter "
                        "(repeatable)")
    parser.add_argument("--arg", action="append", metavar="PARAM=VALUE",
                        help="value of a public (non-bag) parameter (repeatable)")
    parser.add_argument("--budget", metavar="EPS[,DELTA]",
                        help="the dataset's total budget (fixed by its registration or first release)")
    parser.add_argument("--rule", default="basic", choices=("basic", "zcdp"),
                        help="how releases compose in the ledger (default: basic)")
    parser.add_argument("--ledger", metavar="FILE", help="the budget ledger (SQLite)")
    parser.add_argument("--dataset", action="append", metavar="[PARAM=]NAME",
                        help="the dataset a file is (default: the one registered with the file, else "
                        "the file's name without its extension); registered on its first release")
    parser.add_argument("--seed", type=int, help="reproducible noise (the run is then NOT private)")
    parser.add_argument("--delta", type=_delta_text, metavar="D",
                        help="delta at which an approximate release is charged (default: 1e-6; a pure "
                        "release is charged (eps, 0); no effect under the zcdp rule)")
    parser.add_argument("--engine", default="auto", choices=("auto", "memory", "duckdb", "spark"),
                        help="where bag operations run (default auto: DuckDB, streaming the file; memory: "
                        "fuzzpy's interpreter; spark: PySpark, needs the [spark] extra)")
    parser.add_argument("--confidence", metavar="C",
                        help="the level of the accuracy intervals printed with the release, strictly between "
                        "0 and 1 (default: 0.95)")


def _delta_text(text: str) -> str:
    """--delta D, kept as written (the ledger reads it exactly)."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"--delta takes a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"--delta must be strictly between 0 and 1, got {text}")
    return text.strip()


def _progress(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """Progress on stderr for a person watching: not under --json, not when
    stderr is not a terminal."""
    if args.json or not sys.stderr.isatty():
        return None
    return lambda message: sys.stderr.write(f"\r\033[K{message}")
