"""Client conformance suites: KIP-511 and KIP-714 client behaviour, judged on the wire.

Each case runs the client under test (`--client`, see `kconform.fixtures.clients`) against the
reference target and reads the client's traffic from the proxy's wire log.
"""
