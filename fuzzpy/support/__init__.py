"""Support: caches, lazy imports, interrupts, small record helpers, the version.
Imports nothing from fuzzpy (the bottom layer).
"""
