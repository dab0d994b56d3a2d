"""The command line's subcommands (`parse`, `check`, `verify`, `run`, `ledger`, `dataset`, `budget`, `audit`).
May import every layer below (the API first); only `fuzzpy.cli` imports it.

Each module offers `DESCRIPTION`, `add_arguments(parser)` and `run(args) -> exit code`;
`common` holds what they share.

`fuzzpy --help` needs only the one-line summaries below, and `fuzzpy CMD`
imports the module of CMD alone (`fuzzpy.cli.build_parser`); each command
imports its phases (parser, checker, verifier, accountant) when it runs.
"""

#: Each subcommand's one-line summary, in the order `fuzzpy --help` lists them.
SUMMARIES: dict[str, str] = {
    "parse": "parse files and print them back (pretty-printed)",
    "check": "type-check programs; report sensitivities and privacy",
    "verify": "prove or refute the privacy claims of mechanisms",
    "run": "run a checked definition on data under a budget",
    "ledger": "show privacy budgets and the history of releases",
    "dataset": "register, validate and audit datasets (the data owner's commands)",
    "budget": "what a program or a series of releases costs; calibrate noise; plot",
    "audit": "an empirical lower bound on a definition's or mechanism's epsilon (StatDP-style)",
}
