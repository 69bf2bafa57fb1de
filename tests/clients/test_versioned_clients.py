"""Each `kind@version` kind for real: its newest release with a committed lock (or, for a kind
without locks, the newest its registry lists) obtained from its registry, built or installed
into kconform's cache (the user's own, so a build happens once per machine, not per
run), and one short case certified with it.

Skipped, with the reason, when the registry cannot be asked or the toolchain is missing (no
`go`, no `cargo`, no wheel for this Python, no `node`). A first run builds franz-go (1-3 min on
two busy cores), confluent-kafka-go (30-90 s, cgo), rdkafka (librdkafka compiled: 5-10 min) and
confluent-kafka-javascript (3-9 min).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kconform.cli import main
from kconform.fixtures import lockfiles
from kconform.fixtures.clients import ClientUnavailable, create_driver, parse_clients, versions
from kconform.fixtures.clients.registry import client_kinds
from kconform.fixtures.clients.versions import built_versions

# kind -> a short case its library is judged on (not `unsupported` for it)
CASES = {
    "confluent-kafka": "kip714.client.handshake.instance_id",
    "confluent-kafka-javascript": "kip714.client.handshake.instance_id",
    "kafkajs": "kip511.client.software_identity_apache",  # judged: non-strict (ApiVersions v2)
    "franz-go": "kip714.client.handshake.opt_out",
    "sarama": "kip511.client.software_identity_apache",
    "kafka-go": "kip511.client.software_identity_apache",  # judged: non-strict (ApiVersions v0)
    "confluent-kafka-go": "kip714.client.handshake.instance_id",
    "rdkafka": "kip714.client.handshake.instance_id",
    "aiokafka": "kip511.client.software_identity",  # judged: it sends ApiVersions v0
}


HEAVY = {
    "rdkafka": "cargo compiles librdkafka: 4-10 min",
    "confluent-kafka-javascript": "node-gyp compiles the addon and librdkafka: 3-9 min",
}
"""Kinds whose first build does not fit `make test`'s budget on two cores: `make matrix` builds
and certifies them; here they are judged once built (or with KCONFORM_HEAVY_CLIENTS=1)."""


def _newest(kind_name: str) -> str:
    """The newest version with a committed lock (builds use nothing else) for a kind that locks,
    else the newest its registry lists."""
    (kind,) = [k for k in client_kinds() if k.name == kind_name]
    if kind.lock is not None:
        locked = versions.releases(p.name for p in (lockfiles.COMMITTED / kind_name).glob("*"))
        if not locked:
            pytest.skip(f"{kind_name}: no committed lock (`kconform clients lock`)")
        return f"{kind_name}@{locked[-1]}"
    assert kind.versions is not None
    try:
        listed = kind.versions()
    except ClientUnavailable as exc:
        pytest.skip(f"{kind_name}: its registry cannot be asked: {exc}")
    if not listed:
        pytest.skip(f"{kind_name}: its registry lists no version")
    return f"{kind_name}@{listed[-1]}"


@pytest.mark.parametrize("kind_name", sorted(CASES))
def test_the_newest_release_builds_and_is_judged(
    kind_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = _newest(kind_name)
    wanted = name.split("@", 1)[1]
    if (kind_name in HEAVY and os.environ.get("KCONFORM_HEAVY_CLIENTS") != "1"
            and wanted not in built_versions(kind_name)):  # fmt: skip
        pytest.skip(f"{name} is not built here and its build does not fit make test "
                    f"({HEAVY[kind_name]}): `make matrix` builds and certifies it; "
                    "KCONFORM_HEAVY_CLIENTS=1 builds it here")  # fmt: skip
    (spec,) = parse_clients(name)
    driver = create_driver(spec)
    reason = driver.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{name} unavailable here: {reason}")
    assert driver.version == spec.version  # from the library itself, checked at build time

    main(["certify", "--client", name, "--cases", CASES[kind_name], "--out", str(tmp_path)])
    capsys.readouterr()
    results = json.loads((tmp_path / "results.json").read_text())
    # a case sharing its recorded client run with others (`shares=`) brings them along
    (result,) = [r for r in results["results"] if r["case_id"] == CASES[kind_name]]
    assert (result["subject"], result["version"]) == (name, spec.version)
    assert result["verdict"] not in ("error", "skipped", "unsupported"), result
