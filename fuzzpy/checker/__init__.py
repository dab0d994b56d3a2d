"""The linear sensitivity type checker: types, sensitivities and privacy costs.

`check_program(program)` returns a `CheckedProgram` or raises `FuzzError`
with every error found. Module map:

* `driver`      -- check_program, explain_definition: declarations, defs, bounds
* `infer`       -- the Inferencer: dispatch, operators, if, return, coercions
* `literals`    -- variables, literals, tuples, records, lists and vectors
* `blocks`      -- let / sample blocks, lambdas, case
* `apply`       -- application spines: defs, function values
* `primitives`  -- the table of primitive signatures; rules in
                   `first_order`, `higher_order`, `noise`
* `mechanism_calls`, `static_eval` -- calling verified mechanisms
* `usage`       -- sensitivity contexts with provenance (the sensitivity map)
* `costs`       -- privacy contexts as mechanism events (the privacy map)
* `typerel`     -- subtyping, norm conversions; `elaborate` -- static values, types
* `explain`     -- the derivation trace for `check --explain`
* `report`      -- text and JSON output of `fuzzpy check`
"""

from fuzzpy.checker.driver import check_program, explain_definition

__all__ = ["check_program", "explain_definition"]
