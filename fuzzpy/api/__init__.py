"""The Python API: Program, Ledger, load/loads, reports and releases, the notebook magic.
Imports `release` and every layer below it; never the command line.
"""
