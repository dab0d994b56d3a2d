"""fuzzpy's version, read by `fuzzpy.__version__`, `--version` and the proof cache's key."""

VERSION = "0.1.0"
