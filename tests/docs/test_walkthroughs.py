"""Each driver walkthrough (docs/drivers/<language>.md) works as written: its ```sh blocks run in
order, as one script, in an empty folder (its ```<lang> file=NAME blocks written there first
where they stand), ending in `kconform driver check` and a `certify --cases 'kip511.*'`.

The doc is the script: nothing here restates a step, so the doc and the test cannot drift. Only
the checkout's path is put in for `export KCONFORM=...` (and certify is left out where
`CERTIFIED` says), and nothing is resolved on the day: the go.sum the Go walkthrough ends with
must be lines of the committed lock's (the module proxy is off when the module cache has the
version), npm and pip install from committed locks with hashes, the Java jars come from
kconform's cache (assembled from a committed lock).

Which run: `KCONFORM_WALKTHROUGHS` (comma separated, or `all`; default `GATED`). The others run
in `make matrix` (`all`) and say why here (`WHY_UNGATED`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kconform import locations
from kconform.exit_codes import EXIT_ERRORS, EXIT_FAILURES, EXIT_OK
from kconform.fixtures.locking import locked

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "drivers"
LOCKS = ROOT / "fixtures" / "lockfiles"
LANGUAGES = ("go", "node", "python", "java", "rust")
GATED = ("node",)  # measured warm on 2 shared cores: 19 s (CI's 45 minutes had ~2 to spare)
CERTIFIED = ("python", "rust")  # their scripts end in certify --cases 'kip511.*', as written; the
# others end in driver check: a certify's KIP-511 cases cost 30 s each and judge the shipped
# driver they copy, which the client gate already certifies (`make test`)
WHY_UNGATED = {
    "go": "14 s with Go's build cache warm, 105 s cold, as CI's is when pytest runs (the client "
    "gate fills it later): `make matrix` runs it, KCONFORM_WALKTHROUGHS=go,node gates it",
    "rust": "compiles librdkafka for 4-10 minutes cold (it shares the target folder of the "
    "shipped rdkafka builds, which make matrix makes): `make matrix` runs it",
    "python": "56 s with its certify (CI's 45 minutes had about 2 to spare; tests/clients/"
    "test_certify.py certifies end to end in CI): `make matrix` runs it",
    "java": "needs java@4.4.0's jars in kconform's cache (a java@4.4.0 run assembles them from "
    "their lock; 20 s then), which CI's pytest may not have yet: `make matrix` runs it",
}
TOOLS = {"go": "go", "node": "npm", "python": "python3", "java": "javac", "rust": "cargo"}
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.S | re.M)
EXPORT = re.compile(r"^export KCONFORM=.*$", re.M)


def script(doc: str, checkout: Path, *, certify: bool = True) -> str:
    """The walkthrough's blocks as one bash script: sh blocks as they are, file blocks as
    here-documents written where they stand; without its certify line unless `certify`."""
    if not certify:
        doc = "\n".join(line for line in doc.splitlines() if "kconform certify" not in line)
        doc += "\n"
    parts = ["set -euo pipefail"]
    for language, info, body in FENCE.findall(doc):
        named = re.search(r"\bfile=(\S+)", info)
        if named:
            parts.append(f"cat > {named.group(1)} <<'KCONFORM_WALKTHROUGH'\n{body}"
                         "KCONFORM_WALKTHROUGH")  # fmt: skip
        elif language == "sh":
            parts.append(EXPORT.sub(f"export KCONFORM={checkout}", body))
    return "\n".join(parts) + "\n"


def _selected() -> set[str]:
    wanted = os.environ.get("KCONFORM_WALKTHROUGHS", ",".join(GATED))
    return set(LANGUAGES) if wanted == "all" else {w.strip() for w in wanted.split(",")}


def _module_cached(module: str, version: str) -> bool:
    done = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True)
    cache = Path(done.stdout.strip() or Path.home() / "go" / "pkg" / "mod")
    return (cache / "cache" / "download" / module / "@v" / f"{version}.zip").is_file()


def _environment(language: str) -> dict[str, str]:
    env = dict(os.environ)
    env["KCONFORM_CACHE"] = str(locations.cache_root())
    if language == "go":  # go.sum must be lines of the lock's: checked after the run
        env.update({"GOFLAGS": "-mod=mod", "GOSUMDB": "off", "GOTOOLCHAIN": "local"})
        if _module_cached("github.com/twmb/franz-go", "v1.22.3"):
            env["GOPROXY"] = "off"  # warm: nothing fetched at all
    if language == "rust":  # the shipped rdkafka builds' target folder: librdkafka compiled once
        env["CARGO_TARGET_DIR"] = str(locations.cache_root() / "clients" / "rdkafka" / "target")
    if language == "node":  # `npm ci` checks each package against the lock's integrity
        env["npm_config_prefer_offline"] = "true"
    return env


@contextlib.contextmanager
def _rust_target() -> Iterator[None]:
    """The shipped rdkafka builds' target folder, held as cargobuild holds it while it builds."""
    shared = locations.cache_root() / "clients" / "rdkafka"
    shared.mkdir(parents=True, exist_ok=True)
    with locked(shared / "target.lock"):
        yield


def test_every_walkthrough_ends_in_driver_check_and_certify() -> None:
    for language in LANGUAGES:
        text = script((DOCS / f"{language}.md").read_text(), ROOT)
        assert "kconform driver check" in text, language
        assert "kconform certify --client command:" in text, language


@pytest.mark.parametrize("language", LANGUAGES)
def test_walkthrough(language: str, tmp_path: Path) -> None:
    if language not in _selected():
        pytest.skip(WHY_UNGATED.get(language, f"not in KCONFORM_WALKTHROUGHS ({language})"))
    if shutil.which(TOOLS[language]) is None:
        pytest.skip(f"no `{TOOLS[language]}` on PATH")
    if language == "java":
        libs = locations.cache_root() / "kafka" / "maven-4.4.0" / "kafka_2.13-4.4.0" / "libs"
        if not libs.is_dir():
            pytest.skip(f"{libs} is not there: a run of java@4.4.0 assembles it from its lock")
    text = script((DOCS / f"{language}.md").read_text(), ROOT, certify=language in CERTIFIED)
    with _rust_target() if language == "rust" else contextlib.nullcontext():
        done = subprocess.run(["bash", "-c", text], cwd=tmp_path, env=_environment(language),
                              capture_output=True, text=True, timeout=900)  # fmt: skip
    tail = done.stdout[-3000:] + "\n--- stderr ---\n" + done.stderr[-3000:]
    # the script ends in certify: 1 when a case fails, 2 when some could not be judged (KafkaJS
    # sends no ApiVersions v3); driver check, before it, must have been clean (`set -e`)
    assert done.returncode in (EXIT_OK, EXIT_FAILURES, EXIT_ERRORS), tail
    assert "clean: next" in done.stdout and "Traceback" not in done.stderr, tail
    folder = tmp_path / "my-driver"
    if language in CERTIFIED:
        results = json.loads((folder / "report" / "results.json").read_text())
        verdicts = {r["verdict"] for r in results["results"]}
        assert verdicts and "error" not in verdicts, verdicts
    if language == "go":  # every module hash the walkthrough used is one the lock commits
        sums = set((LOCKS / "franz-go" / "v1.22.3" / "go.sum").read_text().splitlines())
        assert set((folder / "go.sum").read_text().splitlines()) <= sums
    if language == "node":  # what npm installed is what kconform's lock names
        lock = json.loads((folder / "package-lock.json").read_text())
        shipped = json.loads((LOCKS / "kafkajs" / "2.2.4" / "package-lock.json").read_text())
        assert (
            lock["packages"]["node_modules/kafkajs"]["integrity"]
            == (shipped["packages"]["node_modules/kafkajs"]["integrity"])
        )
