"""The front end: source text -> syntax tree, syntax diagnostics.
May import `language` and `support`.

* `lexer`           -- the scanner (tokens with offsets)
* `lalr`            -- a lean driver over the LALR(1) tables lark builds
* `parser`          -- `parse_program`: the grammar, compiled once; the entry point
* `tree`, `tree_base`, `tree_types`, `tree_mechanisms` -- building `fuzzpy.language.syntax` nodes
* `syntax_errors`   -- syntax errors worded for users
* `printer`         -- syntax tree -> source text (round-trips through the parser)
"""
