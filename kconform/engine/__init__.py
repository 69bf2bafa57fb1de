"""The engine: how a case runs and what judges it, between the I/O fixtures and the suites.

`model` declares cases (ids, the rules they judge, levels, verdicts); `check` records what a
case observed; `fuzz` is the request fuzzer and the stateful model-based fuzzer; `volumes` is
the KIP-977 keyed workload and its collection. `suites/` holds only the cases and thin helpers.
"""
