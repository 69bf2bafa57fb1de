"""Finding, unpacking and downloading distributions, with small made-up tarballs (no JVM)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kconform.fixtures.targets import kafka_dist
from kconform.fixtures.targets.kafka_dist import DistributionUnavailable


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KCONFORM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KCONFORM_KAFKA_DISTS", raising=False)
    monkeypatch.delenv("KCONFORM_KAFKA_DOWNLOAD", raising=False)
    monkeypatch.setenv("KCONFORM_KAFKA_MAVEN", "0")  # no network here: test_maven_release has it


def clients_jar(version: str, *, exporter: bool = False) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as jar:
        jar.writestr("org/apache/kafka/clients/Metadata.class", b"\xca\xfe")
        if exporter:
            jar.writestr(kafka_dist.EXPORTER_CLASS, b"\xca\xfe")
    return buffer.getvalue()


def make_tarball(folder: Path, version: str, *, extra: dict[str, bytes] | None = None) -> Path:
    """A tarball laid out like the official one, just big enough to be recognised."""
    top = f"kafka_2.13-{version}"
    files = {
        f"{top}/bin/kafka-server-start.sh": b"#!/bin/sh\n",
        f"{top}/libs/kafka-clients-{version}.jar": clients_jar(version),
        **(extra or {}),
    }
    path = folder / f"{top}.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o755
            archive.addfile(info, io.BytesIO(data))
    return path


def test_a_tarball_is_unpacked_once(tmp_path: Path) -> None:
    tarball = make_tarball(tmp_path, "3.9.1")
    first = kafka_dist.resolve(str(tarball))
    assert first.version == "3.9.1" and first.source == str(tarball)
    assert first.script("kafka-server-start.sh").stat().st_mode & 0o100  # still executable
    marker = first.home / "marker"
    marker.write_text("kept")
    assert kafka_dist.resolve(str(tarball)).home == first.home and marker.is_file()


def test_a_folder_is_used_in_place(tmp_path: Path) -> None:
    home = kafka_dist.resolve(str(make_tarball(tmp_path, "4.0.0"))).home
    dist = kafka_dist.resolve(str(home))
    assert (dist.home, dist.version) == (home, "4.0.0")
    assert not dist.has_exporter_api()
    assert dist.reporter_class() == "dev.kconform.sink.KconformSinkReporter"


def test_a_version_is_found_in_the_dists_folders_then_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    make_tarball(shelf, "3.8.0")
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", f"{tmp_path / 'missing'}:{shelf}")
    assert kafka_dist.resolve("3.8.0").version == "3.8.0"
    assert [d.version for d in kafka_dist.available()] == ["3.8.0"]
    monkeypatch.delenv("KCONFORM_KAFKA_DISTS")
    assert kafka_dist.resolve("3.8.0").version == "3.8.0"  # now from the cache


def test_a_missing_version_names_every_way_to_provide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KCONFORM_KAFKA_DISTS", str(tmp_path))
    with pytest.raises(DistributionUnavailable) as info:
        kafka_dist.resolve("3.9.0")
    text = str(info.value)
    for way in ("not found", str(tmp_path), ".tgz", "KCONFORM_KAFKA_DISTS", "Maven Central",
                "mvn", "KCONFORM_KAFKA_DOWNLOAD=1"):  # fmt: skip
        assert way in text


@pytest.mark.parametrize("spec", ["", "4.1", "no/such/folder", "missing.tgz"])
def test_unusable_names_say_why(spec: str) -> None:
    with pytest.raises(DistributionUnavailable):
        kafka_dist.resolve(spec)


def test_not_a_distribution(tmp_path: Path) -> None:
    with pytest.raises(DistributionUnavailable, match=r"no bin/kafka-server-start\.sh"):
        kafka_dist.resolve(str(tmp_path))
    bad = tmp_path / "kafka_2.13-1.0.0.tgz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(DistributionUnavailable, match="cannot unpack"):
        kafka_dist.resolve(str(bad))


def test_a_tarball_escaping_its_folder_is_refused(tmp_path: Path) -> None:
    tarball = make_tarball(tmp_path, "3.7.1", extra={"../evil": b"x"})
    with pytest.raises(DistributionUnavailable, match="cannot unpack"):
        kafka_dist.resolve(str(tarball))
    assert not (tmp_path / "cache" / "evil").exists()
    assert not list((tmp_path / "cache" / "kafka").glob(".*"))  # no half-unpacked leftovers


def test_sha512_files_in_both_published_forms() -> None:
    digest = hashlib.sha512(b"x").hexdigest()
    grouped = " ".join(digest.upper()[i : i + 8] for i in range(0, 128, 8))
    gpg = f"kafka_2.13-3.7.0.tgz: {grouped[:80]}\n                      {grouped[80:]}\n"
    assert kafka_dist.parse_sha512(gpg) == digest
    assert kafka_dist.parse_sha512(f"{digest}  kafka_2.13-3.7.0.tgz\n") == digest
    with pytest.raises(DistributionUnavailable, match="not a SHA-512"):
        kafka_dist.parse_sha512("<html>not found</html>")


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, dict[str, bytes]]]:
    """An archive look-alike on 127.0.0.1 serving whatever the test puts in its dict."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/kafka", files
    server.shutdown()
    server.server_close()


def test_download_only_when_allowed_and_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mirror: tuple[str, dict[str, bytes]]
) -> None:
    url, files = mirror
    shelf = tmp_path / "made"
    shelf.mkdir()
    data = make_tarball(shelf, "3.9.9").read_bytes()
    files["/kafka/3.9.9/kafka_2.13-3.9.9.tgz"] = data
    files["/kafka/3.9.9/kafka_2.13-3.9.9.tgz.sha512"] = (
        hashlib.sha512(b"tampered").hexdigest().encode()
    )
    monkeypatch.setenv("KCONFORM_KAFKA_MIRROR", url)
    with pytest.raises(DistributionUnavailable, match="KCONFORM_KAFKA_DOWNLOAD"):
        kafka_dist.resolve("3.9.9")  # not allowed: nothing is fetched
    monkeypatch.setenv("KCONFORM_KAFKA_DOWNLOAD", "1")
    with pytest.raises(DistributionUnavailable, match="does not match the published"):
        kafka_dist.resolve("3.9.9")
    files["/kafka/3.9.9/kafka_2.13-3.9.9.tgz.sha512"] = (
        f"kafka_2.13-3.9.9.tgz: {hashlib.sha512(data).hexdigest().upper()}\n".encode()
    )
    assert kafka_dist.resolve("3.9.9").version == "3.9.9"
    with pytest.raises(DistributionUnavailable, match="cannot download"):
        kafka_dist.resolve("3.9.8")  # 404


def test_plugin_build_needs_a_kafka_clients_jar(tmp_path: Path) -> None:
    with pytest.raises(DistributionUnavailable, match="no kafka-clients"):
        kafka_dist.build_plugin(tmp_path)
