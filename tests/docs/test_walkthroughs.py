"""Each driver walkthrough (docs/drivers/<language>.md) works as written: its ```sh blocks run in
order, as one script, in an empty folder (its ```<lang> file=NAME blocks written there first
where they stand), ending in `kconform driver check` and a `certify --cases 'kip511.*'`.

The doc is the script: nothing here restates a step, so the doc and the test cannot drift. Only
the checkout's path is put in for `export KCONFORM=...`, and the environment pins what the
languages' tools may fetch: the Go module proxy off (the modules come from the local cache, and
the go.sum the walkthrough ends with must be lines of the committed lock's), npm and pip from
their committed locks with hashes, the Java jars from kconform's cache (assembled from a
committed lock).

Which run: `KCONFORM_WALKTHROUGHS` (comma separated; default `GATED`). Rust compiles librdkafka
for 4-10 minutes on two cores with no cache to reuse, so it runs in `make matrix` (which sets
`KCONFORM_WALKTHROUGHS=all`) and says so here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kconform import locations
from kconform.exit_codes import EXIT_ERRORS, EXIT_FAILURES, EXIT_OK

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "drivers"
LOCKS = ROOT / "fixtures" / "lockfiles"
LANGUAGES = ("go", "node", "python", "java", "rust")
GATED = ("go", "node", "python", "java")
WHY_UNGATED = {"rust": "compiles librdkafka for 4-10 minutes: `make matrix` runs it"}
TOOLS = {"go": "go", "node": "npm", "python": "python3", "java": "javac", "rust": "cargo"}
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.S | re.M)
EXPORT = re.compile(r"^export KCONFORM=.*$", re.M)


def script(doc: str, checkout: Path) -> str:
    """The walkthrough's blocks as one bash script: sh blocks as they are, file blocks as
    here-documents written where they stand."""
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


def _environment(language: str, home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["KCONFORM_CACHE"] = str(locations.cache_root())
    if language == "go":  # modules from the local cache only; go.sum is checked below
        env.update({"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOSUMDB": "off",
                    "GOTOOLCHAIN": "local"})  # fmt: skip
    if language == "node":
        env["npm_config_cache"] = str(Path.home() / ".npm")
        env["npm_config_prefer_offline"] = "true"
    return env


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
    text = script((DOCS / f"{language}.md").read_text(), ROOT)
    done = subprocess.run(["bash", "-c", text], cwd=tmp_path, env=_environment(language, tmp_path),
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    tail = done.stdout[-3000:] + "\n--- stderr ---\n" + done.stderr[-3000:]
    # the script ends in certify: 1 when a case fails, 2 when some could not be judged (KafkaJS
    # sends no ApiVersions v3); driver check, before it, must have been clean (`set -e`)
    assert done.returncode in (EXIT_OK, EXIT_FAILURES, EXIT_ERRORS), tail
    assert "clean: next" in done.stdout and "Traceback" not in done.stderr, tail
    folder = tmp_path / "my-driver"
    results = json.loads((folder / "report" / "results.json").read_text())
    verdicts = {r["verdict"] for r in results["results"]}
    assert verdicts and "error" not in verdicts, verdicts
    if language == "go":  # every module hash the walkthrough used is one the lock commits
        locked = set((LOCKS / "franz-go" / "v1.22.3" / "go.sum").read_text().splitlines())
        assert set((folder / "go.sum").read_text().splitlines()) <= locked
    if language == "node":  # what npm installed is what kconform's lock names
        lock = json.loads((folder / "package-lock.json").read_text())
        shipped = json.loads((LOCKS / "kafkajs" / "2.2.4" / "package-lock.json").read_text())
        assert (
            lock["packages"]["node_modules/kafkajs"]["integrity"]
            == (shipped["packages"]["node_modules/kafkajs"]["integrity"])
        )
