"""Behavioural conformance suites (KIP-511, KIP-714, KIP-977)."""
