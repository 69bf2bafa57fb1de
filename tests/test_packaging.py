"""The wheel a user installs carries every file kconform reads, and works outside this checkout.

An editable install reads the checkout, so a packaging slip (a package or data folder left out,
a path found from the checkout's layout) only shows for a user who ran `pip install .`: issue 40
measured `kconform --version` failing on `kconform.fixtures.coverage`. These tests build the
wheel from the tracked files, compare its RECORD with `git ls-files`, install it into a fresh
virtualenv outside the checkout and run the commands a newcomer runs first, from an empty folder.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from kconform.exit_codes import EXIT_DOES_NOT_CONFORM, EXIT_OK

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "setuptools"
]["package-dir"]

# Tracked files under the mapped folders that the wheel leaves out on purpose (setup.py's
# SKIP_* say how). None today: every tracked file is shipped, data or code.
NOT_SHIPPED: frozenset[str] = frozenset()

# What belongs to the checkout's own editable kconform in the test venv's site-packages: never
# shown to the installed one, which must get every module from its wheel.
OWN = re.compile(r"^(__editable__.*kconform|_?kconform)", re.IGNORECASE)


def _git(*args: str) -> list[str]:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _in_wheel(path: str) -> str:
    """Where the tracked file `path` lands in the wheel (through the package-dir mapping)."""
    top, _, rest = path.partition("/")
    name = next(n for n, folder in PACKAGE_DIR.items() if folder == top)
    return f"{name.replace('.', '/')}/{rest}"


@dataclass(frozen=True)
class Built:
    wheel: Path
    log: str


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The wheel, built by pip from a copy of the files git would commit (tracked or new, not
    ignored): a build inside the checkout would reuse its stale `build/lib`. With the build
    backend requirements.txt locks into this virtualenv (no isolated build resolving
    `setuptools>=77` on the day)."""
    source = tmp_path_factory.mktemp("source")
    for name in _git("ls-files", "--cached", "--others", "--exclude-standard"):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    argv = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
            "-w", str(dist), str(source)]  # fmt: skip
    build = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = dist.glob("kconform-*.whl")
    return Built(wheel, build.stdout + build.stderr)


def test_the_wheel_carries_every_tracked_file_and_nothing_else(built: Built) -> None:
    # setuptools' warning for a data folder it may stop shipping in a later release
    assert "is absent from the `packages` configuration" not in built.log
    with zipfile.ZipFile(built.wheel) as wheel:
        (record,) = [n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")]
        rows = csv.reader(io.StringIO(wheel.read(record).decode()))
        shipped = {row[0] for row in rows if ".dist-info/" not in row[0]}
    folders = [f for f in PACKAGE_DIR.values()]
    tracked = {p for p in _git("ls-files", *folders) if (ROOT / p).is_file()}
    expected = {_in_wheel(p) for p in tracked - NOT_SHIPPED}
    assert len(expected) > 400, "fewer tracked files than expected: is git ls-files right?"
    assert sorted(expected - shipped) == [], "tracked files missing from the wheel"
    assert sorted(shipped - expected) == [], "files in the wheel that git does not track"


# `Path(__file__)` then `.with_name("x")` or `.parent[.parent...] / "x"`: a file or folder a
# module reads beside itself. `.parents[n]` is not matched: tests below forbid it.
BESIDE = re.compile(
    r'Path\(__file__\)(?:\.resolve\(\))?(?:\.with_name\("([^"]+)"\)|((?:\.parent)+) / "([^"]+)")'
)


def _read_beside() -> list[tuple[str, str]]:
    """(module, path it reads beside itself) of every module shipped, checkout-relative."""
    found: list[tuple[str, str]] = []
    for module in _git("ls-files", *PACKAGE_DIR.values()):
        if not module.endswith(".py"):
            continue
        text = (ROOT / module).read_text(encoding="utf-8")
        assert not re.search(r"__file__\)(?:\.resolve\(\))?\.parents\[", text), (
            f"{module} finds data from the checkout's layout: use kconform.locations"
        )
        for name, parents, child in BESIDE.findall(text):
            up = Path(module).parent if name else Path(module).parents[parents.count(".parent") - 1]
            found.append((module, (up / (name or child)).as_posix()))
    return found


def test_every_file_a_module_reads_beside_itself_is_in_the_wheel(built: Built) -> None:
    """A data file found by the module's own `__file__` must be shipped beside it. A path absent
    from the checkout too (fixtures/lockfiles before any lock is committed) is the code's own
    business: it says what is missing at run time."""
    names = set(zipfile.ZipFile(built.wheel).namelist())
    read = _read_beside()
    assert len(read) >= 6, "fewer data paths than the drivers, plugin and schema: is BESIDE right?"
    for module, path in read:
        if (ROOT / path).exists():
            shipped = _in_wheel(path)
            assert shipped in names or any(n.startswith(shipped + "/") for n in names), (
                f"{module} reads {path}, which the wheel lacks"
            )


def test_the_makefile_typechecks_the_folders_the_wheel_maps() -> None:
    """`make typecheck-only` lays out the installed tree by hand (MAPPED_PACKAGES)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (line,) = re.findall(r"^MAPPED_PACKAGES := (.*)$", makefile, re.MULTILINE)
    mapped = {name.removeprefix("kconform.") for name in PACKAGE_DIR if name != "kconform"}
    assert set(line.split()) == mapped
    assert all(PACKAGE_DIR[f"kconform.{name}"] == name for name in mapped)


@dataclass(frozen=True)
class Installed:
    bin: Path
    site: Path  # its site-packages, where the wheel went
    env: dict[str, str]


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A fresh virtualenv (no --system-site-packages) with the wheel installed by pip.

    Its dependencies are the ones this test's own environment installed for the same
    pyproject, shown to it through a `.pth` file naming a folder of links to them; kconform's
    own entries (the editable finder that reads this checkout, its dist-info) are left out, and
    the test proves the installed kconform imports from the venv alone. Installing them afresh
    from pip's cache took 1 min 42 s (pyspark, pyarrow, pandas) on CI's 2 cores, more than this
    test's whole budget, and proves pip's resolver rather than the wheel. `pip check` proves the
    wheel's declared requirements are what the venv sees."""
    root = tmp_path_factory.mktemp("venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (target_site,) = venv.glob("lib/python*/site-packages")
    deps = root / "deps"
    deps.mkdir()
    for folder in site.getsitepackages():
        for entry in Path(folder).iterdir():
            if not OWN.match(entry.name) and entry.suffix != ".pth":
                (deps / entry.name).symlink_to(entry)
    (target_site / "kconform-test-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    subprocess.run([*pip, "install", "-q", "--no-deps", str(built.wheel)], check=True)
    check = subprocess.run([*pip, "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "PYTHON", "VIRTUAL_ENV"))}  # fmt: skip
    env["KCONFORM_CACHE"] = str(root / "cache")
    return Installed(venv / "bin", target_site, env)


def _run(installed: Installed, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(installed.bin / "kconform"), *args],
        cwd=cwd,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def _start(installed: Installed, cwd: Path, *args: str) -> subprocess.Popen[bytes]:
    """The command started in a new folder `cwd`, its output in `cwd.log` (not a pipe: two
    run side by side and are read one after the other)."""
    cwd.mkdir()
    with cwd.with_suffix(".log").open("w") as log:
        return subprocess.Popen(
            [str(installed.bin / "kconform"), *args],
            cwd=cwd,
            env=installed.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def _package_files(installed: Installed) -> set[Path]:
    return {p for p in (installed.site / "kconform").rglob("*") if "__pycache__" not in p.parts}


def test_the_installed_wheel_imports_nothing_from_the_checkout(
    installed: Installed, tmp_path: Path
) -> None:
    probe = (
        "import sys, kconform.cli, kconform.fixtures.coverage, kconform.runner\n"
        "from kconform import locations\n"
        "print(*sys.modules['kconform.fixtures.coverage'].__path__, locations.baselines(),\n"
        "      locations.suites(), locations.checkout(), *sys.path, sep='\\n')\n"
    )
    out = subprocess.run(
        [str(installed.bin / "python"), "-c", probe],
        cwd=tmp_path,
        env=installed.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    coverage, baselines, suites, checkout, *path = out
    for found in (coverage, baselines, suites):
        assert Path(found).is_relative_to(installed.site / "kconform"), found
    assert checkout == "None"
    assert not [p for p in path if p and Path(p).resolve().is_relative_to(ROOT)]


def test_the_installed_command_runs_and_reports_under_the_current_folder(
    installed: Installed, tmp_path: Path
) -> None:
    """What a newcomer runs first, each from an empty folder: the reports land in ./reports/out
    (README, "The two commands"), nothing is written into the installed package. `run` and
    `certify` go side by side: their client cases mostly wait on the clients (73 s one after
    the other, CI's budget is tight)."""
    before = _package_files(installed)
    version = _run(installed, tmp_path, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, "kconform 0.1.0"), version.stderr
    listing = _run(installed, tmp_path, "list")
    assert listing.returncode == 0, listing.stderr
    assert "kip511.apiversions.response_header_v0" in listing.stdout
    assert "kip714.push.terminating.single" in listing.stdout

    ran, certified = tmp_path / "run", tmp_path / "certify"
    # -j 4: the run's 20 client cases wait on their clients (68 s in one process, 43 s in four)
    run = _start(installed, ran, "run", "--target", "reference", "--cases", "kip511.*", "-j4")
    certify = _start(installed, certified, "certify", "--client", "confluent-kafka",
                     "--cases", "kip511.*")  # fmt: skip
    # certify: confluent-kafka's three kip511 fails are MUST failures (DOES NOT CONFORM, exit 1)
    # and known deviations in its committed baseline, shipped in the wheel: the certificate's
    # "baseline: matches" line says the installed kconform applied it.
    expected = {ran: EXIT_OK, certified: EXIT_DOES_NOT_CONFORM}
    for process, folder in ((run, ran), (certify, certified)):
        code = process.wait(timeout=240)
        assert code == expected[folder], folder.with_suffix(".log").read_text()[-3000:]
    latest = ran / "reports" / "out" / "latest"
    for name in ("results.json", "index.html", "junit.xml"):
        assert (latest / name).is_file(), name
    assert '"kip511.apiversions.response_header_v0"' in (latest / "results.json").read_text()
    report = certified / "reports" / "out" / "latest" / "results.json"
    assert '"kip511.client.software_identity"' in report.read_text()
    certificate = (report.parent / "certificate.json").read_text()
    assert '"baseline": "matches baselines/confluent-kafka/installed.json' in certificate, (
        certificate
    )
    assert (report.parent / "certificate.svg").is_file()
    assert _package_files(installed) == before, "a command wrote into the installed package"
