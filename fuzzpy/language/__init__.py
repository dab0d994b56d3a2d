"""The language: source and spans, the syntax tree, types, the sensitivity algebra, diagnostics, messages, limits.
May import `support` only.
"""
