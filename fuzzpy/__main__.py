from fuzzpy.cli import entry

entry()
