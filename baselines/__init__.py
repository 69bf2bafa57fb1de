"""Committed expectations of the subjects measured (`<kind>/<version>.json`: facts and the
exceptions they do not derive; `whys.json`: every why, written once): reports/expectations.py."""
