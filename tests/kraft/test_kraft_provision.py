"""The CI provisioning's own decisions, without running it: when it acts, which Debian mirror."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docker import provision


def apt_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "apt"
    (root / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_the_mirror_is_the_one_apt_uses_deb822(tmp_path: Path) -> None:
    root = apt_tree(tmp_path, {"sources.list.d/debian.sources": (
        "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
        "URIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n"
    )})  # fmt: skip
    assert provision.debian_mirror((root,)) == "http://mirror.example/debian"


def test_the_mirror_from_one_line_sources(tmp_path: Path) -> None:
    lines = [
        "# deb http://old.example/debian bookworm main",
        "deb http://security.example/debian-security bookworm-security main",
        "deb [arch=amd64 signed-by=/k.gpg] http://local.example/debian/ bookworm main",
    ]
    root = apt_tree(tmp_path, {
        "sources.list": "\n".join(lines) + "\n",
        "sources.list.d/other.list": "deb https://packages.example/apt stable main\n",
    })  # fmt: skip
    assert provision.debian_mirror((root,)) == "http://local.example/debian"


def test_without_a_debian_entry_the_mirror_is_debs_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = apt_tree(tmp_path, {"sources.list.d/x.list": "deb https://packages.example/apt s m\n"})
    assert provision.debian_mirror((root,)) == provision.DEFAULT_MIRROR
    monkeypatch.setenv("KCONFORM_DEBIAN_MIRROR", "http://chosen.example/debian")
    assert provision.debian_mirror((root,)) == "http://chosen.example/debian"


def test_it_acts_only_in_ci_as_root_without_an_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert provision.why_not(ci_only=True) == "CI is not true"
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(provision.os, "geteuid", lambda: 1000)
    assert str(provision.why_not(ci_only=True)).startswith("not root")
    monkeypatch.setattr(provision.os, "geteuid", lambda: 0)
    import kconform.fixtures.targets.kraft_container as kc

    monkeypatch.setattr(kc, "docker_unavailable_reason", lambda: None)
    assert "reachable already" in str(provision.why_not(ci_only=True))
    monkeypatch.setattr(kc, "docker_unavailable_reason", lambda: "no engine")
    monkeypatch.setattr(provision, "distributions", lambda: "Apache Kafka 4.4.0 cannot be had: x")
    assert str(provision.why_not(ci_only=True)).startswith("Apache Kafka 4.4.0 cannot be had")
    monkeypatch.setattr(provision, "distributions", lambda: {"4.4.0": Path("/dists/4.4.0")})
    assert provision.why_not(ci_only=True) is None


def test_the_releases_come_as_the_apache_target_finds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No stand-in tarballs needed: a release kconform cannot find or resolve says so; one it
    finds (here a folder named by KCONFORM_KAFKA_DISTS, Maven off) is its distribution."""
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", str(tmp_path / "dists"))
    monkeypatch.setattr(provision, "VERSIONS", ("9.8.7",))
    why = provision.distributions()
    assert isinstance(why, str) and why.startswith("Apache Kafka 9.8.7 cannot be had")
    home = tmp_path / "dists" / "kafka_2.13-9.8.7"
    (home / "bin").mkdir(parents=True)
    (home / "libs").mkdir()
    (home / "bin" / "kafka-server-start.sh").write_text("#!/bin/sh\n")
    (home / "libs" / "kafka-clients-9.8.7.jar").write_bytes(b"")
    assert provision.distributions() == {"9.8.7": home.resolve()}


def test_the_base_image_recipe_names_its_mirror() -> None:
    assert provision.recipe_key("http://a/debian") != provision.recipe_key("http://b/debian")
    assert provision.recipe_key("http://a/debian") == provision.recipe_key("http://a/debian")
