"""The release protocol (`fuzzpy run`): quote -> check the data -> charge -> compute -> record.
May import `engines`, `data`, `ledger`, `runtime` and below; never `api` or the command line.
"""
