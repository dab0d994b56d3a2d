"""`fuzzpy audit FILE DEF`: an empirical lower bound on the privacy loss of a checked
definition or a `mechanism`, beside its proved upper bound (issue 30 item 6; the
method is `fuzzpy.runtime.audit`'s docstring). Exit 0 when the samples stay
below the claim, 1 when they prove a loss above it (a leak: for a proved program,
a soundness bug), 2 when the program cannot be audited."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fuzzpy.commands.common import EXIT_OK, EXIT_REJECTED, print_json, usage_error

if TYPE_CHECKING:
    from fuzzpy.language import syntax as S
    from fuzzpy.runtime.audit import AuditResult

DESCRIPTION = (
    "Run a checked definition (one bag parameter, any others given with --arg; a `fuzzy` result) or a `mechanism` many times "
    "on neighbouring inputs it searches for (small adversarial datasets; inputs at the edge of "
    "`requires`), and report a lower bound on its epsilon with a confidence level, beside the "
    "proved upper bound: every pair is screened on a pilot sample and the best get more pilot runs; "
    "candidate output events are chosen on the pilots (StatDP's histogram events, DP-Sniper's linear "
    "classifier, unions of cells ranked by an estimated likelihood ratio), then tested on fresh runs "
    "with Clopper-Pearson bounds "
    "and a Bonferroni correction. Exit 0 when the samples stay below the claim, 1 when they prove "
    "a loss above it, 2 when the program cannot be audited."
)
EPILOG = (
    "A loss proved above the claim of a program `check` accepts or `verify` proves is a soundness "
    "bug of fuzzpy. The bound holds at the stated confidence over the audit's own randomness "
    "(--seed fixes it); a bound below the claim proves nothing about privacy."
)


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError("the confidence must be at least 0.5 and below 1 (e.g. 0.95)")
    return value


def _runs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 100 <= value <= 10**8:
        raise argparse.ArgumentTypeError("the number of runs must be between 100 and 10^8")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value < 2**31:
        raise argparse.ArgumentTypeError("the seed must be between 0 and 2^31 - 1")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a fuzzpy source file (.fz)")
    p.add_argument("definition", metavar="DEF", help="the definition or mechanism to audit")
    p.add_argument("--samples", type=_runs, default=None,
                   help="fresh runs per input in the test (default 100000 for a mechanism, "
                        "5000 for a definition, which runs one run at a time)")
    p.add_argument("--pilot", type=_runs, default=None,
                   help="runs per input of each candidate pair in the screening pilot, to choose pairs and "
                        "events; the 4 best pairs get 4 times as many more (default samples / 5)")
    p.add_argument("--arg", action="append", metavar="NAME=VALUE",
                   help="fix a public parameter instead of searching it (repeatable): a mechanism's public "
                        "number or bool (e.g. eps=0.5, N=2), a mechanism's vector at a length (q=16: the number "
                        "of queries), a definition's public or static parameter (which it needs)")
    p.add_argument("--confidence", type=_confidence, default=0.95,
                   help="the confidence of the lower bound (default 0.95)")
    p.add_argument("--seed", type=_seed, default=0, help="the audit's randomness (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--plot", metavar="PATH", help="write a plot of the tested events (PNG, PDF or SVG; matplotlib)")
    p.add_argument("--no-verify", action="store_true",
                   help="for a mechanism: do not run `verify` to say whether its claim is proved")


def run(args: argparse.Namespace) -> int:
    from fuzzpy.checker.driver import check_program
    from fuzzpy.language import syntax as S
    from fuzzpy.release.pipeline import load_source, parse
    from fuzzpy.runtime.audit import AuditError, audit_definition, audit_mechanism, safe_audit

    program = parse(load_source(args.file))  # syntax and I/O errors: the CLI's diagnostics
    check_program(program)  # type and privacy errors too: only a checked program is audited
    names = {d.name for d in program.decls if isinstance(d, (S.DefDecl, S.MechanismDecl))}
    if args.definition not in names:
        known = ", ".join(sorted(names)) or "none"
        raise usage_error(f"no definition or mechanism `{args.definition}` in {args.file}",
                          hint=f"defined there: {known}")
    if args.plot:
        _check_plot_path(args.plot)
    mechanism = any(isinstance(d, S.MechanismDecl) and d.name == args.definition for d in program.decls)
    fixed = _arguments(args.arg or [])
    try:
        if mechanism:
            result = safe_audit(lambda: audit_mechanism(
                program, args.definition, samples=args.samples or 100_000, pilot=args.pilot,
                confidence=args.confidence, seed=args.seed, arguments=fixed))
        else:
            result = safe_audit(lambda: audit_definition(
                program, args.definition, samples=args.samples or 5_000, pilot=args.pilot,
                confidence=args.confidence, seed=args.seed, arguments=fixed))
    except AuditError as error:
        raise usage_error(f"cannot audit `{args.definition}`: {error}") from None
    status = None if not mechanism or args.no_verify else _verify_status(program, args.definition)
    if args.plot:
        _plot(result, args.plot)
    if args.json:
        print_json({"ok": not result.leak, "verified": status, **result.to_json(),
                    **({"plot": args.plot} if args.plot else {})})
    else:
        sys.stdout.write(result.text(status) + ("" if not args.plot else f"  plot written to {args.plot}\n"))
    return EXIT_REJECTED if result.leak else EXIT_OK


def _arguments(items: list[str]) -> dict[str, str]:
    """--arg NAME=VALUE, each name once (read against the parameters' types by the audit)."""
    found: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise usage_error(f"--arg expects NAME=VALUE, not `{item}`")
        if name.strip() in found:  # the last one silently winning would hide a slip
            raise usage_error(f"--arg gives `{name.strip()}` twice")
        found[name.strip()] = value.strip()
    return found


def _verify_status(program: S.Program, name: str) -> str:
    from fuzzpy.checker.scope import static_constants
    from fuzzpy.language import syntax as S
    from fuzzpy.language.diagnostics import FuzzError
    from fuzzpy.verifier import verify_mechanism

    decl = next(d for d in program.decls if isinstance(d, S.MechanismDecl) and d.name == name)
    try:
        return verify_mechanism(decl, program, constants=static_constants(program)).status
    except FuzzError:
        return "malformed"


def _check_plot_path(path: str) -> None:
    import importlib.util
    import os

    if importlib.util.find_spec("matplotlib") is None:
        raise usage_error("--plot needs matplotlib, which is not installed",
                          hint="pip install 'fuzzpy[plot]' (or run without --plot)")
    if not path.lower().endswith((".png", ".pdf", ".svg")):
        raise usage_error(f"--plot {path}: the file must end in .png, .pdf or .svg")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise usage_error(f"--plot {path}: no folder {folder}")


def _plot(result: AuditResult, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fuzzpy.runtime.audit_plot import figure

    fig = figure(result)
    fig.savefig(path)
    plt.close(fig)
