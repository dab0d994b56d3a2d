"""The release protocol: quote -> check the data -> charge -> compute -> record.
Imports `engines`, `data`, `ledger`, `runtime` and below; never `api` or the command line.
"""
