"""Committed verdict baselines for targets that are known not to conform (`<target>.json`)."""
