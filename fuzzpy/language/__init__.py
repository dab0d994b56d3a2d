"""The language: source and spans, the syntax tree, types, the sensitivity algebra,
diagnostics, messages, limits. Imports only `support`.
"""
