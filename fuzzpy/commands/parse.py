"""`fuzzpy parse FILE...`: parse files and print them back, pretty-printed.

Text mode prints each program (a `// FILE` line first when there are several)
and the diagnostics of those that fail on stderr. `--json` prints one
document: {"ok", "diagnostics", "files": [{"file", "ok", "printed"}]}.
Exit codes: 0 all parsed, 1 a syntax error, 2 a file could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys

from fuzzpy.commands.common import exit_code_for
from fuzzpy.language.diagnostics import Diagnostic, FuzzError, render_all
from fuzzpy.language.source import Source

DESCRIPTION = (
    "Parse fuzzpy programs and print them back, pretty-printed. "
    "Exit 0 if every file parses, 1 on a syntax error, 2 if a file cannot be read."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="fuzzpy source files (.fz)")
    p.add_argument("--json", action="store_true",
                   help='print one JSON document: {"ok", "diagnostics", "files"}')


def run(args: argparse.Namespace) -> int:
    from fuzzpy.frontend.printer import print_program
    from fuzzpy.release.pipeline import load_source, parse

    diagnostics: list[Diagnostic] = []
    sources: dict[str, Source] = {}
    results: list[dict[str, object]] = []
    for path in args.files:
        printed: str | None = None
        try:
            source = load_source(path)
            sources[source.name] = source
            printed = print_program(parse(source))
        except FuzzError as error:
            diagnostics.extend(error.diagnostics)
        results.append({"file": path, "ok": printed is not None, "printed": printed})

    if args.json:
        document = {
            "ok": not diagnostics,
            "diagnostics": [d.to_json() for d in diagnostics],
            "files": results,
        }
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        several = len(results) > 1
        for result in results:
            if result["printed"] is not None:
                if several:
                    sys.stdout.write(f"// {result['file']}\n")
                sys.stdout.write(str(result["printed"]))
        if diagnostics:
            sys.stderr.write(render_all(diagnostics, sources) + "\n")
    return exit_code_for(diagnostics)
