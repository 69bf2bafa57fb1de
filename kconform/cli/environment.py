"""The environment variables a user sets to steer kconform, checked before any subcommand runs.

A bad value is a usage error naming it, said at once: read deep inside a run (a client build in
a worker, a Kafka release fetched for a target), the same error came out as "no case produced a
result" with no reason, or not at all (`KCONFORM_KAFKA_MAVEN=false` quietly meant "on").
`KCONFORM_KAFKA_DISTS` is a search path: entries that are no folder are warned of where it is
read (`kafka_dist.search_folders`), not refused.
"""

from __future__ import annotations

import os


def check_environment() -> None:
    """UsageError naming a bad `$KCONFORM_CACHE` (not a writable folder) or a
    `$KCONFORM_KAFKA_MAVEN` other than 0 or 1."""
    from kconform import locations
    from kconform.fixtures.targets import maven_release

    if os.environ.get(locations.CACHE_ENV):
        locations.cache_root()
    if maven_release.MAVEN_ENV in os.environ:
        maven_release.enabled()
