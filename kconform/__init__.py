"""kconform: conformance and fuzz testing of the Kafka protocol features that carry telemetry."""

__version__ = "0.1.0"
