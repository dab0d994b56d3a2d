"""Data: readers and row rules, validation, data in memory, dataset identity.
Imports `ledger`, `runtime` and the layers below them; never `engines`, `release`, `api`.
"""

from fuzzpy.data.memory import DuckDBTable, register_frame

__all__ = ["DuckDBTable", "register_frame"]
