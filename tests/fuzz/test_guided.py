"""The coverage-guided fuzzer's own rules (kconform/engine/fuzz/guided.py), without a broker:
which batches the corpus keeps (AFL's rule on JaCoCo probes) against a fake JaCoCo agent
replaying scripted dumps, that the read counters go back to the agent for `--coverage`, and
that examples derived from a growing corpus neither upset Hypothesis nor leave the case's
kind of input (malformed stays one request broken, well-formed stays decodable)."""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kconform.codecs.framing import decode_request
from kconform.codecs.messages import IncrementalAlterConfigsRequest, RequestHeader
from kconform.engine.fuzz import guided, stream
from kconform.engine.fuzz.inputs import FuzzRequest, well_formed
from kconform.engine.fuzz.mutations import changes_state, malformed
from kconform.fixtures.coverage import wire
from kconform.fixtures.coverage.agent import CoverageAgent
from kconform.fixtures.coverage.jacoco import JacocoTools
from kconform.fixtures.targets.registry import jvm_agent_targets
from kconform.fixtures.wirelog import WireLog
from tests.coverage.test_wire import class_block, session_block

MANAGER = "org/apache/kafka/server/ClientMetricsManager"
SETTINGS = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))  # fmt: skip


def exec_bytes(*hit: int) -> bytes:
    probes = [i in hit for i in range(16)]
    return wire.HEADER + session_block("apache-node-1") + class_block(-5, MANAGER, probes)


@pytest.fixture
def fake_agent() -> Iterator[tuple[int, list[bytes]]]:
    """A JaCoCo agent on 127.0.0.1 answering each dump with the next scripted `.exec`."""
    server = socket.create_server(("127.0.0.1", 0))
    script: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(wire.HEADER)
                conn.recv(64)
                conn.sendall(script.pop(0)[len(wire.HEADER) :] + bytes([wire.BLOCK_CMDOK]))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], script
    server.close()


def agent_on(port: int) -> CoverageAgent:
    agent = CoverageAgent(JacocoTools(Path("agent.jar"), Path("cli.jar")), "apache-4.4.0")
    agent.ports[1] = port
    return agent


def batch(name: str) -> list[FuzzRequest]:
    return [FuzzRequest(name, b"\x00\x12\x00\x00\x00\x00\x00\x01\xff\xff")]


def test_corpus_keeps_what_set_a_new_probe(fake_agent: tuple[int, list[bytes]]) -> None:
    port, script = fake_agent
    script += [exec_bytes(0, 1), exec_bytes(1), exec_bytes(1, 2), exec_bytes(), exec_bytes(0, 3)]
    guide = guided.Guide(agent_on(port), "guided")
    new = [guide.after(batch(f"b{i}"), examples=i, frozen=False) for i in range(3)]
    assert new == [2, 0, 1]
    assert [b[0].description for b in guide.corpus.entries] == ["b0", "b2"]
    assert guide.after(batch("b3"), examples=3, frozen=False) == 0
    # after a finding the corpus stays as it is (shrinking replays against it), probes still count
    assert guide.after(batch("b4"), examples=4, frozen=True) == 1
    assert len(guide.corpus.entries) == 2 and guide.union.count == 4
    # every byte read went back to the agent, for the run's --coverage dumps
    saved = wire.split_blocks(bytes(guide.agent.saved[1])).classes
    assert [c.hit for c in saved] == [2, 1, 2, 0, 2]
    assert [s[2] for s in guide.samples] == [2, 3, 4]  # a sample when the union grew


@SETTINGS
@given(st.data())
def test_slow_entries_are_derived_from_less_often(data: st.DataObject) -> None:
    """An entry that took 0.9 s is picked far less often than one that took 50 ms; one slower
    than `SLOW_BATCH_S` is not kept at all."""
    corpus = guided.Corpus(keeping=True)
    fast, slow = [data.draw(well_formed("configs"))], [data.draw(well_formed("configs"))]
    corpus.offer(fast, 1, seconds=0.05)
    corpus.offer(slow, 1, seconds=0.9)
    picks = {"fast": 0, "slow": 0}
    for seed in range(200):
        rng = random.Random(seed)
        picked = rng.choices(corpus.entries, corpus.weights())[0]
        picks["fast" if picked is corpus.entries[0] else "slow"] += 1
    assert picks["slow"] < picks["fast"] / 5  # weights 1/0.95 against 1/0.1
    assert not corpus.offer(slow, 1, seconds=guided.SLOW_BATCH_S + 0.5)  # as AFL's timeouts
    assert len(corpus.entries) == 2


def test_unguided_keeps_nothing_but_measures_the_same(fake_agent: tuple[int, list[bytes]]) -> None:
    port, script = fake_agent
    script += [exec_bytes(0, 1), exec_bytes(1, 2)]
    guide = guided.Guide(agent_on(port), "unguided")
    assert [guide.after(batch("b"), examples=1, frozen=False) for _ in range(2)] == [2, 1]
    assert guide.corpus.entries == [] and guide.union.count == 3


def test_a_node_that_cannot_be_read_is_noted(fake_agent: tuple[int, list[bytes]]) -> None:
    port, script = fake_agent
    script.append(exec_bytes(4))
    agent = agent_on(port)
    gone = socket.create_server(("127.0.0.1", 0))
    agent.ports[2] = gone.getsockname()[1]
    gone.close()
    guide = guided.Guide(agent, "guided")
    assert guide.after(batch("b"), examples=1, frozen=False) == 1
    assert len(agent.lost) == 1 and agent.lost[0].startswith("node 2 (guided fuzzing)")


@pytest.mark.parametrize("broken", [True, False])
def test_derived_examples_with_a_growing_corpus(broken: bool) -> None:
    """The corpus grows while Hypothesis runs: no FlakyStrategyDefinition, and once it holds
    something, examples lead with derived requests."""
    guide = guided.Guide(agent_on(1), "guided")
    pipelining = stream.Pipelining(depth=64)
    seen: list[list[FuzzRequest]] = []

    @SETTINGS
    @given(guide.examples("push_telemetry", broken, pipelining))
    def run(fuzzes: list[FuzzRequest]) -> None:
        assert 1 <= len(fuzzes) <= 64
        seen.append(fuzzes)
        guide.corpus.offer(fuzzes, new_probes=1)

    run()
    assert guide.derived > 0 and guide.fresh > 0
    assert len(guide.corpus.entries) == len(seen)


@SETTINGS
@given(st.data())
def test_derived_broken_requests_descend_and_change_nothing(data: st.DataObject) -> None:
    base = [data.draw(malformed("configs")) for _ in range(2)]
    made = guided.derived(data.draw(st.integers(0, 2**32 - 1)), [base], guided.derive_broken)
    for child in made:
        assert any(child.description.startswith(b.description + " | ") for b in base)
        assert not changes_state(child)
    again = guided.derived(7, [base], guided.derive_broken)
    assert again == guided.derived(7, [base], guided.derive_broken)  # the seed decides


@SETTINGS
@given(st.data())
def test_derived_well_formed_requests_stay_decodable(data: st.DataObject) -> None:
    base = [data.draw(well_formed("configs"))]
    made = guided.derived(data.draw(st.integers(0, 2**32 - 1)), [base], guided.derive_well_formed)
    api = base[0].claimed()
    assert api is not None
    for child in made:
        frame = decode_request(child.payload)
        assert frame.api_key == api[0] and frame.body is not None
        assert "re-drawn" in child.description
        assert not changes_state(child)


def _client_metrics_alter() -> FuzzRequest:
    """IncrementalAlterConfigs v0, ValidateOnly: CLIENT_METRICS 'r' with interval.ms and match."""
    entry = IncrementalAlterConfigsRequest.AlterableConfig
    configs = [entry(name="interval.ms", config_operation=0, value="99"),
               entry(name="match", config_operation=0, value="client_id=.*")]  # fmt: skip
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource(
        resource_type=16, resource_name="r", configs=configs
    )
    body = IncrementalAlterConfigsRequest(resources=[resource], validate_only=True)
    header = RequestHeader(request_api_key=44, request_api_version=0, correlation_id=3)
    return FuzzRequest("client metrics alter", header.encode(1) + body.encode(0))


@settings(SETTINGS, max_examples=1)
@given(st.none())  # the derived requests' strategies need a Hypothesis build context
def test_a_re_draw_lands_inside_the_body_and_keeps_the_rest(_: None) -> None:
    """One field re-drawn at any depth (a config's value, a resource's type): the rest of the
    entry, which is what set its probes, carries over. Over many seeds every level is hit."""
    base = [_client_metrics_alter()]
    changed: set[str] = set()
    for seed in range(300):
        for child in guided.derived(seed, [base], guided.derive_well_formed):
            body = decode_request(child.payload).body
            assert isinstance(body, IncrementalAlterConfigsRequest) and body.validate_only
            attr = child.description.rsplit("with ", 1)[1].removesuffix(" re-drawn")
            changed.add(attr)
            if attr in ("name", "value", "config_operation"):  # inside one config
                (resource,) = body.resources
                assert (resource.resource_type, resource.resource_name) == (16, "r")
                assert len(resource.configs) == 2
    assert {"resources", "resource_type", "resource_name", "configs", "name", "value"} <= changed


def test_a_deviation_on_record_never_hides_a_new_finding() -> None:
    """In a coverage run a known deviation's finding lets the search go on; a later finding
    no deviation explains is the one reported, however long, and it starts the shrinking."""
    from kconform.engine.fuzz.engine import Finding, FuzzSession

    session = object.__new__(FuzzSession)
    fields = {"best": None, "_best_rank": (False, 0), "failures": 0, "first_failure_at": None}
    session.__dict__.update(fields, first_failure_example=0, examples=1, _mark=0, log=WireLog())
    session.found(Finding("known", "", size=10), on_record=True)
    assert session.best is not None and session.best.summary == "known"
    assert session.first_failure_at is None and session.first_failure_example == 1
    session.examples = 5
    session.found(Finding("new", "", size=900))
    assert session.best.summary == "new" and session.first_failure_at is not None
    session.found(Finding("known again", "", size=1), on_record=True)
    assert session.best.summary == "new" and session.first_failure_example == 1


@pytest.mark.parametrize("spec", ["reference", "librdkafka_mock", "apache:4.4.0,reference"])
@pytest.mark.parametrize("flag", ["--coverage-guided", "--coverage-unguided"])
def test_guidance_needs_one_apache_target(
    spec: str, flag: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A usage error (exit 2) before anything starts: JaCoCo rides only on JVMs kconform starts."""
    from kconform.cli import main

    assert main(["fuzz", "--target", spec, flag, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{flag} needs one {jvm_agent_targets()} target" in err
    assert not (tmp_path / "out").exists()
