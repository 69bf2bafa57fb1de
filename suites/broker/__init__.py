"""Broker conformance suites: what a broker implementer or operator runs."""
