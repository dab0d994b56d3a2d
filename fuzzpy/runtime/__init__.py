"""The interpreter, values and exact samplers: evaluates a checked definition on rows it is given.
May import `checker`, `verifier`, `accounting` and below; knows nothing of files, engines, ledgers.

* `interpreter`, `operations`, `primitives`, `values`: the functional language;
  functions given to `map`/`filter`/`split`/`group` run over whole columns.
  What every construct computes is docs/semantics.md: `exact` (macro-level
  numbers), `rowops` (per-row numbers, total), `aggregates` (exact sums),
  `sigmoid`, `vectors`, `statics` (static zeros: what is not evaluated),
  `defaults` (a row's value when its recursion runs out of calls).
* `bag`: columnar databases (numpy columns, lazy row selections).
* `mechanisms`: the imperative `mechanism` bodies, in exact rational arithmetic.
* `randomness`, `samplers`, `noise`, `expmech`: exact discrete Laplace and
  Gaussian samplers (Canonne, Kamath & Steinke 2020) and the grid on which
  releases are made, safe against floating-point attacks (Mironov 2012).
* `lengths`: the lengths of a definition's vectors, read off its arguments.
(Files, datasets and the loader are `fuzzpy.data`; the `fuzzpy run` protocol
is `fuzzpy.release`.)
"""
