"""fuzzpy: a Fuzz-style language for differentially private programs."""

__version__ = "0.1.0"
