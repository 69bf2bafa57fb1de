"""`<kind>@<version>`: parsing, the registries' listings (cached briefly) and the build lock."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from kconform.fixtures.clients import parse_clients
from kconform.fixtures.clients import versions as v
from kconform.fixtures.clients.driver import ClientUnavailable
from kconform.fixtures.clients.kind import versions_row
from kconform.fixtures.clients.registry import client_kinds


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_versioned_names_and_their_labels() -> None:
    specs = parse_clients("confluent-kafka@2.8.0, java@4.3.1, command:/x/a@b, confluent-kafka")
    assert [(s.kind, s.argument, s.version) for s in specs] == [
        ("confluent-kafka", "", "2.8.0"), ("java", "4.3.1", ""),
        ("command", "/x/a@b", ""), ("confluent-kafka", "", "")]  # fmt: skip
    assert [s.label for s in specs] == [
        "confluent-kafka@2.8.0", "java:4.3.1", "command:/x/a@b", "confluent-kafka"]  # fmt: skip
    assert parse_clients("java@4.3.1") == parse_clients("java:4.3.1")  # one driver, one label


@pytest.mark.parametrize(
    ("text", "message"),
    [("kafka-python@3.0.12", "takes no @version"), ("command@1.0.0", "takes no @version"),
     ("confluent-kafka@latest", "not a release"), ("confluent-kafka@", "not a release"),
     ("java@4.3", "not a version"), ("nope@1.0.0", "unknown client")],
)  # fmt: skip
def test_bad_versions_say_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_clients(text)


def test_every_versioned_kind_says_so_in_its_syntax() -> None:
    for kind in client_kinds():
        assert (kind.pin is not None) == any("@" in s for s in kind.syntax), kind.name


def test_release_order_and_the_versions_that_matter() -> None:
    listed = ["2.10.0", "2.5.0", "2.9.0", "2.5.3", "2.10.1", "2.4.0", "2.11.0rc1", "v2.6.0"]
    assert v.releases(listed, since="2.5.0") == ["2.5.0", "2.5.3", "v2.6.0", "2.9.0", "2.10.0",
                                                 "2.10.1"]  # fmt: skip
    assert v.that_matter(v.releases(listed, since="2.5.0")) == [
        "2.5.0", "v2.6.0", "2.9.0", "2.10.0", "2.10.1"]  # fmt: skip
    assert v.release_key("v1.22.3") == (1, 22, 3) and v.release_key("1.2") is None


def test_a_listing_is_asked_once_then_reused_and_kept_when_the_registry_fails() -> None:
    calls: list[int] = []

    def fetch() -> list[str]:
        calls.append(1)
        return ["1.0.0", "1.1.0"]

    assert v.listed("lib", fetch) == ["1.0.0", "1.1.0"]
    assert v.listed("lib", fetch) == ["1.0.0", "1.1.0"] and len(calls) == 1

    def failing() -> list[str]:
        raise ClientUnavailable("registry unreachable")

    assert v.listed("lib", failing, ttl=0) == ["1.0.0", "1.1.0"]  # stale beats nothing
    with pytest.raises(ClientUnavailable, match="unreachable"):
        v.listed("other", failing)


def test_clients_row_lists_versions_or_why_not(_cache: Path) -> None:
    (kind,) = [k for k in client_kinds() if k.name == "confluent-kafka"]
    listing = _cache / "clients" / "listings" / "confluent-kafka.json"
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps({"t": time.time(), "versions": ["2.4.0", "2.5.0", "2.16.1"]}))
    (_cache / "clients" / "confluent-kafka" / "2.5.0-abc" / v.COMPLETE).parent.mkdir(parents=True)
    (_cache / "clients" / "confluent-kafka" / "2.5.0-abc" / v.COMPLETE).write_text("")
    name, available, detail = versions_row(kind)
    assert (name, available) == ("confluent-kafka@<version>", True)
    assert "2.5.0 2.16.1" in detail and "2.4.0" not in detail and "built here: 2.5.0" in detail


def test_a_build_runs_once_under_its_lock_and_a_broken_one_is_redone(tmp_path: Path) -> None:
    folder = tmp_path / "lib" / "1.0.0-x"
    builds: list[int] = []

    def build(into: Path) -> None:
        builds.append(1)
        time.sleep(0.2)
        (into / "out").write_text("built")

    threads = [threading.Thread(target=v.build_once, args=(folder, build)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and (folder / "out").read_text() == "built"

    (folder / v.COMPLETE).unlink()  # as if the build died before it finished

    def failing(into: Path) -> None:
        raise ClientUnavailable("compiler said no")

    with pytest.raises(ClientUnavailable, match="said no"):
        v.build_once(folder, failing)
    assert not v.built(folder)
    v.build_once(folder, build)
    assert v.built(folder) and len(builds) == 2


def test_a_build_step_that_fails_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ClientUnavailable, match=r"building x: .*exited 3: boom"):
        v.run_tool(["sh", "-c", "echo boom >&2; exit 3"], "building x", cwd=tmp_path)
    with pytest.raises(ClientUnavailable, match="not on PATH"):
        v.run_tool(["no-such-tool-here"], "building x", cwd=tmp_path)
