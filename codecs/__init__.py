"""The sans-IO reference codec: Kafka wire primitives, declared messages, telemetry payloads.

Nothing here performs I/O: bytes in, values out; values in, bytes out.
"""
