"""Which cases this pytest session runs, in what order, and how N worker processes share them
(`kconform run -j N`, `kconform certify -j N`; the processes themselves: kconform.plugin.workers).

The `--cases`/`--level` selection, disruptive cases last per subject, then the split.

Most client cases spend their time waiting on the client's own intervals, one after another;
the waits overlap when the cases run side by side. Each worker is a pytest process of its own
with its own targets (a reference target, its proxy and mock), its own client processes and its
own results file; nothing is shared, so a case cannot see another's traffic or subscriptions.

The split keeps together only what should stay together: the cases that judge one recorded
client run (`suites.client.helpers.shared_run`; each says which with `case(shares=...)`) form
one group per subject and recipe, so the run is recorded once; every other case is a group of
its own (each worker has its own targets, so a disruptive case ends only its own worker's).

`kconform run -j N` shares the groups out as the workers become free: every worker collects the
same cases, orders the groups the same way (longest expected first, from the durations of the
previous run when there is one) and claims the next unclaimed group by creating its file in a
folder the workers share (`try_claim`: O_EXCL, so exactly one worker wins). A fixed split cannot
know that one case waits 7 s on a client and the next 0.1 s; claiming balances whatever happens.
`--kconform-shard i/N` alone is the fixed split (`share`): largest group first to the least
loaded worker, the same answer in every worker, for splitting a run over machines.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from kconform.engine.model import matches_level, select_cases
from kconform.errors import UsageError
from kconform.plugin.items import case_info, subject_label

_CLAIM_ORDER = pytest.StashKey[list[tuple[str, list[pytest.Item]]]]()

SHARD_OPTION = "--kconform-shard"


@dataclass(frozen=True)
class Shard:
    """Worker `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, flag: str = SHARD_OPTION) -> Shard:
    """`i/N` with 1 <= i <= N (a worker's part of a run, or `matrix run --shard`'s part of the
    matrix); a UsageError naming `flag` otherwise."""
    left, sep, right = text.partition("/")
    if not sep or not left.isdigit() or not right.isdigit():
        raise UsageError(f"{flag} expects i/N (e.g. 2/4), not {text!r}")
    shard = Shard(int(left), int(right))
    if not 1 <= shard.index <= shard.count:
        raise UsageError(f"{flag} {text}: i must be between 1 and N")
    return shard


def assign(groups: Iterable[tuple[str, int]], count: int) -> dict[str, int]:
    """{group: worker index (1-based)}: largest group first to the least loaded worker (ties to
    the lowest index), so every worker computes the same answer from the same groups."""
    load = [0] * count
    placed: dict[str, int] = {}
    for key, size in sorted(groups, key=lambda g: (-g[1], g[0])):
        worker = min(range(count), key=lambda w: (load[w], w))
        load[worker] += size
        placed[key] = worker + 1
    return placed


def share(keys: Sequence[str], shard: Shard) -> list[bool]:
    """For each item's group key, in order: does it belong to `shard`?"""
    sizes: dict[str, int] = {}
    for key in keys:
        sizes[key] = sizes.get(key, 0) + 1
    placed = assign(sizes.items(), shard.count)
    return [placed[key] == shard.index for key in keys]


@dataclass(frozen=True)
class Group:
    """Cases that run in one worker, one after another, in collection order."""

    key: str
    phase: tuple[int, bool]  # (position of its subject, disruptive): earlier phases go first
    nodeids: tuple[str, ...]


def claim_order(groups: Sequence[Group], expected: Mapping[str, float]) -> list[Group]:
    """The order workers claim groups in: phase by phase (so a disruptive case still comes after
    its subject's other cases), and within a phase the longest expected first, so the last
    groups claimed are short and no worker is left with a long one at the end. A case without a
    duration from the previous run counts as the median of those with one (1 s when none has)."""
    known = [expected[n] for g in groups for n in g.nodeids if n in expected]
    typical = statistics.median(known) if known else 1.0

    def seconds(group: Group) -> float:
        return sum(expected.get(n, typical) for n in group.nodeids)

    return sorted(groups, key=lambda g: (g.phase, -seconds(g)))  # stable: ties keep their order


def try_claim(folder: Path, key: str) -> bool:
    """Claim group `key` for this worker; False when another worker already has it."""
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    try:
        fd = os.open(folder / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as claimed:
        claimed.write(key + "\n")  # which group, for a person reading the folder
    return True


def count_done(folder: Path) -> int:
    """Record one more finished case run in `folder`; the run's count so far (all workers)."""
    fd = os.open(folder / "done", os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b".")  # one byte, appended atomically: the file's size is the count
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _disruptive_last(items)
    _select_cases(config, items)
    groups_file = config.getoption("--kconform-groups")
    if groups_file:
        Path(groups_file).write_text(str(len({_shard_group(i) for i in items})), "utf-8")
    _select_shard(config, items)


def _select_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With --kconform-claims, order the groups for claiming (every case stays collected; the
    run loop claims); with --kconform-shard i/N, keep worker i's groups (`share`)."""
    if config.getoption("--kconform-claims"):
        _order_for_claims(config, items)
        return
    text = config.getoption("--kconform-shard")
    if not text:
        return
    try:
        shard = parse_shard(text)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    mine = share([_shard_group(item) for item in items], shard)
    drop = [item for item, keep in zip(items, mine, strict=True) if not keep]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item, keep in zip(items, mine, strict=True) if keep]


def _order_for_claims(config: pytest.Config, items: list[pytest.Item]) -> None:
    positions: dict[str, int] = {}
    members: dict[str, list[pytest.Item]] = {}
    phases: dict[str, tuple[int, bool]] = {}
    for item in items:  # already per subject, disruptive cases last (_disruptive_last)
        key = _shard_group(item)
        position = positions.setdefault(subject_label(item), len(positions))
        disruptive = item.get_closest_marker("kconform_disruptive") is not None
        phases.setdefault(key, (position, disruptive))
        members.setdefault(key, []).append(item)
    groups = [Group(k, phases[k], tuple(i.nodeid for i in v)) for k, v in members.items()]
    ordered = claim_order(groups, _durations(config.getoption("--kconform-durations")))
    items[:] = [item for group in ordered for item in members[group.key]]
    config.stash[_CLAIM_ORDER] = [(group.key, members[group.key]) for group in ordered]


def _durations(path: str | None) -> dict[str, float]:
    """{nodeid: seconds} from an earlier run's results; nothing when there is none or it does not
    read (it only orders the work, so a bad file costs balance, never a verdict)."""
    if not path:
        return {}
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8"))["results"]
        return {
            str(r["nodeid"]): float(r["duration"])
            for r in results
            if r.get("nodeid") and isinstance(r.get("duration"), int | float)
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """With --kconform-claims: run each group this worker claims, as it becomes free."""
    order = session.config.stash.get(_CLAIM_ORDER, None)
    if order is None:
        return None
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    if session.config.option.collectonly:
        return True
    folder = Path(session.config.getoption("--kconform-claims"))
    chains: dict[str, Sequence[object]] = {i.nodeid: i.listchain() for i in session.items}
    for key, members in order:
        if not try_claim(folder, key):
            continue
        for index, item in enumerate(members):
            if index + 1 < len(members):
                nextitem: pytest.Item | None = members[index + 1]
            else:
                nextitem = _least_related(item, session.items, chains)
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
    return True


def _least_related(
    item: pytest.Item, items: list[pytest.Item], chains: dict[str, Sequence[object]]
) -> pytest.Item | None:
    """The item sharing the fewest collectors with `item`, as pytest's `nextitem` after a group:
    the worker does not know which group it will claim next, and tearing down to what every item
    shares keeps the session's targets up without leaving a module set up that the next group's
    item does not belong to (pytest would refuse it)."""
    mine = chains[item.nodeid]

    def shared(other: pytest.Item) -> int:
        count = 0
        for a, b in zip(mine, chains[other.nodeid], strict=False):
            if a is not b:
                break
            count += 1
        return count

    others = [other for other in items if other is not item]
    return min(others, key=shared) if others else None


def _shard_group(item: pytest.Item) -> str:
    """What must run in one worker: cases that judge one recorded run (`case(shares=)`: a
    client recipe, a target's volume run) stay together per subject and recording, so it is
    recorded once; any other case stands alone (each worker has its own target, so a disruptive
    case only ends its own worker's)."""
    info = case_info(item)
    if info is not None and info.shares is not None:
        return f"{info.shares}::{subject_label(item)}"
    return item.nodeid


def _select_cases(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--cases` (case ids, prefixes, wildcards or rule ids: `select_cases`) and `--level`."""
    patterns = [p.strip() for p in (config.getoption("--cases") or "").split(",") if p.strip()]
    level = config.getoption("--level")
    if not patterns and level == "all":
        return
    infos = {info.id: info for info in map(case_info, items) if info is not None}
    chosen = set().union(*select_cases(infos.values(), patterns).values()) if patterns else None
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        info = case_info(item)
        if info is None:
            (drop if patterns else keep).append(item)
            continue
        wanted = chosen is None or info.id in chosen
        (keep if wanted and matches_level(info, level) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _disruptive_last(items: list[pytest.Item]) -> None:
    """Per target, cases marked `kconform_disruptive` (they may kill a fragile target, as the
    security suite kills the librdkafka mock) run after every other case, in their own order."""
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(subject_label(item), index)
    items.sort(key=lambda item: (
        first_seen[subject_label(item)], item.get_closest_marker("kconform_disruptive") is not None
    ))  # fmt: skip
