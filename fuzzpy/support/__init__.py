"""Support: caches, lazy imports, interrupts, small record helpers, the version.
May import nothing from fuzzpy (the bottom layer).
"""
