"""kconform: conformance and fuzz testing for the Kafka protocol features that carry client telemetry."""

__version__ = "0.1.0"
