"""The defects `minimal.py` can be switched to, one per broken client script."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Behaviour:
    """Defects, one per script; all off is the well-behaved client."""

    no_terminating_push: bool = False
    # with a push unanswered at close, no final push (Java 3.7.0-3.8.0 producer, KAFKA-17731)
    no_terminating_push_in_flight: bool = False
    # a final push on the first close its harness process asks of it only (a race some closes
    # win: the idle Java producer's, KAFKA-17731's neighbour); later closes send none
    terminating_push_first_close_only: bool = False
    two_terminating_pushes: bool = False
    zero_first_push_delay: bool = False
    metric_prefix: str = "org.apache.kafka."
    non_monotonic_sum: bool = False
    hostname_attribute: bool = False
    downgrade_loop: bool = False
    trusts_advertised_version: bool = False  # retries at any advertised version, even no lower
    ignores_unknown_subscription: bool = False
    per_prefix_matches: bool = False  # a metric once per requested prefix it matches
    aborts_when_unmatched: bool = False  # dies (SIGABRT) on a subscription matching nothing
    silent_when_unmatched: bool = False  # pushes nothing while its subscription matches nothing
    null_when_unmatched: bool = False  # a null Metrics while its subscription matches nothing
    own_client_id: str | None = None  # sent instead of the client.id it is given
    start_delay: float = 0.0  # seconds before its first request (a JVM starting on a busy machine)
    # not defects: ways a correct client may differ
    nodes: int = 1  # brokers its node-level latency gauges describe (more: payloads past 1000 B)
    terminates_under_previous_subscription: bool = False  # its close raced the last Get's answer
    # driver faults (the contract, not the client): "handle" SIGTERM as the contract says,
    # "ignore" it, or leave Python's "default" (the process dies without closing its client)
    sigterm: str = "handle"
    gives_up_on_transport_failure: bool = False  # a lost connection ends its telemetry for good
    # sends telemetry on a new connection whose ApiVersions lack 71/72, as the first one had them
    remembers_advertisement: bool = False
    # a new connection whose ApiVersions lack 71/72 ends its telemetry for good
    gives_up_when_unadvertised: bool = False
    # a reconnection that fails (the broker still down) ends its telemetry for good; one that
    # succeeds at once (a lost push) does not
    gives_up_when_refused: bool = False
    # a Get answered with a Null id ends its telemetry until close, whose Terminating push
    # still goes out with the id it kept (Java 3.8+: validateClientInstanceId throws)
    stops_at_null_id: bool = False
    # an ApiVersions error whose answer holds a key table counts as success (franz-go < v1.21.6)
    ignores_apiversions_error: bool = False
    v0_after_reset: bool = False  # retries ApiVersions at v0 after a reset (franz-go < v1.21.4)
    # seconds before it reconnects after that reset: its own timer (kafka-go's metadata refresh,
    # up to 6 s), longer than a fixed 3 s window
    reset_reconnect_delay: float = 0.0
    type_blind_match: bool = False  # matches names and prefixes with the client type dropped
    avg_over_window: bool = False  # an .avg is the sum over the window's ms (franz-go < v1.21.4)
    # after a lost connection, goes back to the address it first used once its next push is
    # due, though Metadata gives that broker another (Java < 4.2.1, KAFKA-20393)
    stale_address: bool = False
    # a client without KIP-511 v3 or KIP-714 (segmentio/kafka-go): ApiVersions v0 only, never 71/72
    apiversions_v0_only: bool = False
    sends_telemetry: bool = True  # sends GetTelemetrySubscriptions/PushTelemetry when advertised
    claims_telemetry: bool = True  # its --describe lists the "telemetry" capability
    software_name: str = "kconform-minimal"  # its ClientSoftwareName
    software_version: str = "1.0.0"  # its ClientSoftwareVersion (its --describe says 1.0.0)
