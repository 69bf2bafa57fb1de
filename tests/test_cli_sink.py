"""`--sink` as the commands take it, and `kconform plugin build`: one-line errors, exit 2.

The build test compiles the sink plugin with the JDK's javac against the libs/ of a real Kafka
distribution (../shared/kafka, when the checkout has one).
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
from fake_sink import FakeSink, fake_cluster

from kconform.cli import main
from kconform.exit_codes import EXIT_OK, EXIT_USAGE
from kconform.fixtures.targets import kafka_dist
from kconform.fixtures.targets import kraft_config as cfg
from kconform.fixtures.targets.registry import parse_targets
from kconform.reports.model import RunResults
from kconform.runner import RunOptions, pytest_args

SHARED_KAFKA = Path(__file__).resolve().parents[2] / "shared" / "kafka"
SINK_CLASS = "dev/kconform/sink/KconformSinkReporter.class"


def _one_line_error(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("kconform: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["--sink", "http://127.0.0.1:18099"], ["--sink is for the external target"]),
        (["--target", "reference", "--sink", "http://127.0.0.1:18099"], ["external target"]),
        (["--bootstrap-server", "127.0.0.1:9", "--sink", "127.0.0.1:18099"],
         ["--sink: sink URL '127.0.0.1:18099' is not http://host:port"]),
        (["--bootstrap-server", "127.0.0.1:9", "--sink", "http://b1:18099/health"], ["no path"]),
        (["--bootstrap-server", "127.0.0.1:9", "--sink", "http://b1:18099,"], ["empty entry"]),
    ],
)  # fmt: skip
def test_run_sink_usage_errors(
    argv: list[str], needles: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", *argv, "--out", str(tmp_path / "out")]) == EXIT_USAGE
    _one_line_error(capsys, *needles)
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_fuzz_and_volumes_refuse_a_sink_without_the_external_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["fuzz", "--sink", "http://127.0.0.1:18099", "--out", str(tmp_path)]) == EXIT_USAGE
    _one_line_error(capsys, "--sink is for the external target")
    argv = ["volumes", "--bootstrap-server", "127.0.0.1:9", "--target", "external",
            "--sink", "https://127.0.0.1:18099", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == EXIT_USAGE
    _one_line_error(capsys, "plain HTTP")


def test_pytest_sink_needs_an_external_target(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "kconform.plugin", "--target", "reference", "--sink",
                                "http://127.0.0.1:18099")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--sink is for the external target*"])


def test_pytest_sink_is_validated(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "kconform.plugin", "--bootstrap-server", "127.0.0.1:9",
                                "--sink", "http://b1:notaport")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*sink URL 'http://b1:notaport' is not http://host:port*"])


def test_run_hands_the_sinks_to_the_external_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kconform run --sink` reaches the target through pytest: the report maps every sink."""
    external = parse_targets("external", bootstrap="b:1", sink="http://s:2")
    options = RunOptions(targets=tuple(external))
    args = pytest_args(options, tmp_path / "r.json")
    assert args[args.index("--sink") + 1] == "http://s:2"
    sinks = [FakeSink(str(n)) for n in (2, 3, 1)]
    try:
        with fake_cluster(3) as brokers:
            argv = ["run", "--bootstrap-server", f"127.0.0.1:{brokers[0].port}",
                    "--sink", ",".join(s.url for s in sinks), "--cases", "kip714.push.delivered",
                    "--no-default-baselines", "--out", str(tmp_path / "out")]  # fmt: skip
            main(argv)
    finally:
        for sink in sinks:
            sink.close()
    results = RunResults.read(tmp_path / "out" / "results.json")
    (subject,) = results.subjects
    assert {n: s["url"] for n, s in subject["sinks"].items()} == {
        "1": sinks[2].url,
        "2": sinks[0].url,
        "3": sinks[1].url,
    }
    assert "telemetry_sink" in subject["capabilities"]
    (result,) = results.results
    assert (result.case_id, result.verdict) == ("kip714.push.delivered", "unsupported")
    assert "lacks telemetry" in result.message  # the fake brokers offer no PushTelemetry


# --- kconform plugin build -----------------------------------------------------------------


def test_plugin_build_needs_a_folder_with_kafka_clients(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert main(["plugin", "build", "--kafka-libs", str(missing)]) == EXIT_USAGE
    _one_line_error(capsys, f"--kafka-libs {missing} is not a folder")
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "kafka_2.13-4.1.0.jar").write_bytes(b"")
    argv = ["plugin", "build", "--kafka-libs", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main(argv) == EXIT_USAGE
    _one_line_error(capsys, "holds no kafka-clients-<version>.jar")
    assert not (tmp_path / "o").exists()


def test_plugin_build_without_a_jdk_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    with zipfile.ZipFile(libs / "kafka-clients-3.7.0.jar", "w") as jar:
        jar.writestr("org/apache/kafka/common/Metric.class", b"")
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    monkeypatch.setenv("PATH", str(empty_path))  # no javac, no jar
    argv = ["plugin", "build", "--kafka-libs", str(libs), "--out", str(tmp_path / "o")]
    assert main(argv) == EXIT_USAGE
    _one_line_error(capsys, "needs a JDK: no `javac` on PATH")


@pytest.fixture(scope="module")
def kafka_libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """libs/ of the real Kafka 3.7.0: the tarball in ../shared/kafka when there, else the
    release as `make test` takes it (KCONFORM_KAFKA_DISTS, then Maven Central's jars)."""
    tarball = SHARED_KAFKA / "kafka_2.13-3.7.0.tgz"
    if not tarball.is_file():
        try:
            return kafka_dist.resolve("3.7.0").home / "libs"
        except kafka_dist.DistributionUnavailable as exc:
            pytest.skip(f"no Kafka 3.7.0: {exc}")
    out = tmp_path_factory.mktemp("kafka-3.7.0")
    with tarfile.open(tarball) as archive:
        members = [m for m in archive.getmembers() if "/libs/" in m.name]
        archive.extractall(out, members=members, filter="data")
    (libs,) = out.glob("*/libs")
    return libs


@pytest.mark.slow
def test_plugin_build_against_a_real_distribution(
    kafka_libs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("javac") is None or shutil.which("jar") is None:
        pytest.skip("no JDK (javac, jar) on PATH")
    out = tmp_path / "plugin"
    argv = ["plugin", "build", "--kafka-libs", str(kafka_libs.parent), "--out", str(out)]
    assert main(argv) == EXIT_OK  # the distribution's folder works as well as its libs/
    captured = capsys.readouterr()
    jar = out / "kconform-sink.jar"
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
    assert SINK_CLASS in names
    assert "dev/kconform/sink/KconformSinkExporterReporter.class" not in names  # 3.7: no KIP-1217
    lines = captured.out.splitlines()
    assert f"metric.reporters={cfg.REPORTER_CLASS}" in lines
    assert f"kconform.sink.port={cfg.SINK_PORT}" in lines
    assert any(line.startswith("kconform.sink.host=") for line in lines)
    assert all(line.startswith("#") or "=" in line for line in lines)  # a properties fragment
    assert f"built {jar}" in captured.err and "kafka-clients 3.7.0" in captured.err
    assert "append the class to it with a comma" in captured.err


def test_plugin_build_port_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "kafka-clients-3.7.0.jar").write_bytes(b"")
    argv = ["plugin", "build", "--kafka-libs", str(libs), "--sink-port", "70000"]
    assert main(argv) == EXIT_USAGE
    _one_line_error(capsys, "--sink-port 70000 is not a TCP port")


def test_plugin_build_needs_its_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugin"]) == EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err
