"""Support: caches, lazy imports, interrupts, small record helpers.

Imports nothing from fuzzpy (the bottom layer).
"""
