"""Fuzz and model-based suites: malformed and unusual requests, and random client sessions.

`test_requests` sends requests the codec's declarations generate (well-formed with unusual
values, and malformed) and checks the target answers or closes and stays alive; `test_stateful`
drives random client sessions and compares every answer with the reference model. Both run
Hypothesis inside an ordinary `@case` (see `engine.py` for how it meets the case's event loop),
save what they find in `regressions/`, and replay it on every later run.
"""
