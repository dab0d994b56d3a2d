"""The `fuzzpy` subcommands, one module each (`parse`, `check`, `verify`,
`run`, `ledger`, `budget`). Each module offers `add_arguments(parser)` and
`run(args) -> exit code`, and imports its phases only when it runs, so that
building the argument parser stays cheap. `common` holds what they share.
"""
