"""The committed JSON Schema of the driver contract says what `contract.py` declares.

The schema files are what authors in other languages validate against and what
`kconform driver check` uses; they are generated from `contract.EVENT_FIELDS` and
`DESCRIBE_FIELDS`, so this fails when someone edits one side only.
"""

from __future__ import annotations

import io
import json

import jsonschema
import pytest

from kconform.fixtures.clients import contract, contract_schema


def test_committed_schemas_are_generated_from_contract_py() -> None:
    schemas = {
        contract_schema.EVENTS: contract_schema.events_schema(),
        contract_schema.DESCRIBE: contract_schema.describe_schema(),
    }
    for path, schema in schemas.items():
        assert path.read_text() == contract_schema.rendered(schema), (
            f"{path} is stale: run `python -m kconform.fixtures.clients.contract_schema`"
        )


def test_events_the_python_writer_prints_are_valid() -> None:
    stream = io.StringIO()
    out = contract.EventWriter(stream)
    out.emit(contract.STARTED, client="x", version="1.0", scenario="idle")
    out.emit(contract.DELIVERED, topic="t", partition=0, offset=41)
    out.emit(contract.CONSUMED, topic="t", partition=0, offset=41)
    out.emit(contract.ERROR, error="boom", code="NAME", fatal=False)
    out.emit(contract.CLOSING)
    out.emit(contract.CLOSED, seconds=6.2, close_seconds=0.01)
    validator = jsonschema.Draft202012Validator(contract_schema.events_schema())
    for line in stream.getvalue().splitlines():
        validator.validate(json.loads(line))
        assert contract.parse_event(line) is not None


@pytest.mark.parametrize("line", [
    {"event": "started", "t": 1.0},  # no client, no version
    {"event": "delivered", "t": 1.0, "topic": "t", "partition": "0", "offset": 1},
    {"event": "finished", "t": 1.0},
    {"event": "closing"},  # no t
])  # fmt: skip
def test_events_breaking_the_contract_are_refused(line: dict[str, object]) -> None:
    validator = jsonschema.Draft202012Validator(contract_schema.events_schema())
    assert list(validator.iter_errors(line))


def test_every_declared_event_is_in_the_schema() -> None:
    names = contract_schema.events_schema()["properties"]["event"]["enum"]
    assert names == [contract.STARTED, contract.DELIVERED, contract.CONSUMED, contract.ERROR,
                     contract.CLOSING, contract.CLOSED, contract.DESCRIBED,
                     contract.APP_METRIC]  # fmt: skip


def test_describe_scenarios_are_optional_and_named_by_the_contract() -> None:
    """A driver written before `admin`/`share-consume` lists no scenarios and stays valid; one
    that lists a scenario the contract does not know is refused."""
    validator = jsonschema.Draft202012Validator(contract_schema.describe_schema())
    validator.validate({"implementation": "x", "version": "1"})
    validator.validate({"implementation": "x", "version": "1",
                        "scenarios": ["produce", "admin", "share-consume"]})  # fmt: skip
    assert list(validator.iter_errors({"implementation": "x", "version": "1",
                                       "scenarios": ["teleport"]}))  # fmt: skip


def test_new_scenarios_round_trip_through_the_command_line() -> None:
    for scenario in (contract.Scenario.admin(seconds=3),
                     contract.Scenario.share_consume("t", group="g", seconds=2)):  # fmt: skip
        argv = contract.command_line("h:1", {"k": "v"}, scenario)
        assert contract.parse_command_line(argv).scenario == scenario
    with pytest.raises(ValueError, match="share-consume needs a group"):
        contract.Scenario("share-consume", 1.0, topic="t")


def test_describe_schema() -> None:
    validator = jsonschema.Draft202012Validator(contract_schema.describe_schema())
    validator.validate({"implementation": "kafkajs", "version": "2.2.4", "capabilities": []})
    validator.validate({"implementation": "c", "version": "1", "capabilities": ["telemetry"],
                        "bundles": {"librdkafka": "2.5.0"}})  # fmt: skip
    assert list(validator.iter_errors({"implementation": "x"}))
    assert list(validator.iter_errors({"implementation": "x", "version": "1",
                                       "capabilities": ["telepathy"]}))  # fmt: skip
    assert list(validator.iter_errors({"implementation": "x", "version": "1",
                                       "bundles": {"librdkafka": ""}}))  # fmt: skip
