"""`Check`: what one case observed, in the words a failure report needs.

A case calls `check.expect(what, expected, observed)` for each rule it verifies (soft: the case
goes on), `check.require(...)` where going on makes no sense (stops the case), `check.observe`
for INFO records. Connections opened through `check.connect()` log every frame to the case's
own wire log, which is the evidence shown next to expected vs observed. Where the target keeps
a wire log of its own (the reference broker's proxy), `evidence()` adds the notes it wrote on
the case's responses: the rule each rejection enforces.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any, TypeVar

from kconform.engine.model import CaseInfo
from kconform.engine.results import RECORDED, Expectation
from kconform.errors import CaseAbort, HarnessDefect, Inconclusive, PreconditionUnmet
from kconform.fixtures.connection import KafkaConnection
from kconform.fixtures.targets.base import BrokerTarget
from kconform.fixtures.wirelog import WireEntry, WireLog

_unique = itertools.count(1)
PRECONDITION_NOTE = "precondition not met"  # how `precondition` notes what was not met


T = TypeVar("T")


def present(value: T | None, what: str) -> T:
    """`value`, which the harness's own logic guarantees is set; `HarnessDefect` if it is not.

    Suites use it where a plain `assert x is not None` would narrow the type, because an
    AssertionError is a `fail` verdict: it would blame the subject for the harness's slip."""
    if value is None:
        raise HarnessDefect(f"harness defect: {what} is unexpectedly missing")
    return value


class Check:
    def __init__(self, info: CaseInfo, target: BrokerTarget | None) -> None:
        self.info = info
        self.target = target
        self.wire_log = WireLog()
        self.expectations: list[Expectation] = []
        self.notes: list[str] = []
        self.connections: list[KafkaConnection] = []
        self.cleanups: list[Callable[[], Any]] = []
        self.started = time.time()
        self.waited = 0.0  # seconds slept on purpose (protocol intervals), for the benchmark
        self.needs = ""  # the rule an unmet precondition named (PreconditionUnmet.needs)
        self.subject: Any = None  # client cases: the driver being judged (target is the broker)
        self._tag = f"{info.id.split('.')[-1][:20]}-{uuid.uuid4().hex[:6]}-{next(_unique)}"
        log = getattr(target, "wire_log", None)
        self._target_log = log if isinstance(log, WireLog) else None
        self._target_mark = self._target_log.mark() if self._target_log is not None else 0

    # --- expectations ---------------------------------------------------------------------

    def expect(self, what: str, expected: Any, observed: Any, ok: bool | None = None) -> bool:
        """Record one expectation; `ok` defaults to observed == expected."""
        passed = bool(observed == expected) if ok is None else bool(ok)
        self.expectations.append(Expectation(what, _plain(expected), _plain(observed), passed))
        return passed

    def expect_in(self, what: str, allowed: Collection[Any], observed: Any) -> bool:
        return self.expect(
            what, f"one of {sorted(map(str, allowed))}", observed, observed in allowed
        )

    def require(self, what: str, expected: Any, observed: Any, ok: bool | None = None) -> None:
        if not self.expect(what, expected, observed, ok):
            raise CaseAbort(f"{what}: expected {expected!r}, observed {observed!r}")

    def precondition(
        self, what: str, expected: Any, observed: Any, ok: bool | None = None, *, needs: str = ""
    ) -> None:
        """Stop the case as not-applicable unless the subject met this precondition. `needs`:
        the rule id that requires what the precondition asks (PreconditionUnmet.needs), when
        its failure elsewhere explains this one."""
        passed = bool(observed == expected) if ok is None else bool(ok)
        if not passed:
            self.note(f"{PRECONDITION_NOTE}: {what}: expected {expected!r}, observed {observed!r}")
            self.needs = needs
            raise PreconditionUnmet(f"{what}: expected {expected!r}, observed {observed!r}",
                                    needs=needs)  # fmt: skip

    def observe(self, what: str, observed: Any) -> None:
        """An INFO record: what the target chose where the KIP leaves a choice."""
        self.expectations.append(Expectation(what, RECORDED, _plain(observed), True))

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def violated(self) -> bool:
        return any(not e.ok for e in self.expectations)

    # --- helpers cases share ----------------------------------------------------------------

    def unique(self, prefix: str = "kc") -> str:
        """This case's name for `prefix` (the same on every call; no other case uses it)."""
        return f"{prefix}-{self._tag}"

    def fresh(self, prefix: str = "kc") -> str:
        """A new name on every call (a second subscription in the same case, say)."""
        return f"{prefix}-{self._tag}-{next(_unique)}"

    async def connect(
        self,
        broker: int = 0,
        *,
        client_id: str | None = None,
        timeout: float = 5.0,
        null_client_id: bool = False,
    ) -> KafkaConnection:
        """A new connection to the target's `broker`-th broker, logged to this case;
        `null_client_id`: its request headers carry a null client id (the field is nullable)."""
        if self.target is None:
            raise Inconclusive("this case has no broker target")
        brokers = list(self.target.brokers)
        address = brokers[broker % len(brokers)]
        label = f"case{len(self.connections) + 1}->broker {address.node_id}"
        named = None if null_client_id else client_id or self.unique("client")
        connection = await KafkaConnection.open(
            address.host, address.port, client_id=named,
            wire_log=self.wire_log, timeout=timeout, label=label,
        )  # fmt: skip
        self.connections.append(connection)
        return connection

    async def wait(self, seconds: float) -> None:
        """Sleep because the protocol forces it (a push interval); accounted in `waited`."""
        await asyncio.sleep(seconds)
        self.waited += seconds

    def defer(self, cleanup: Callable[[], Any]) -> None:
        """Run `cleanup` after the case (e.g. delete the subscription it created)."""
        self.cleanups.append(cleanup)

    def evidence(self) -> list[WireEntry]:
        """The case's wire log, each response the target annotated (with the rule behind a
        rejection) carrying that note too."""
        entries = self.wire_log.entries()
        if self._target_log is None:
            return entries
        notes = {
            (e.api_key, e.correlation_id, e.raw): "; ".join(
                part for part in e.note.split("; ") if part.startswith("rule ")
            )
            for e in self._target_log.since(self._target_mark)
            if "rule " in e.note
        }
        out = []
        for entry in entries:
            note = notes.get((entry.api_key, entry.correlation_id, entry.raw))
            if entry.direction != "client->broker" and note:
                entry = replace(entry, note="; ".join(n for n in (entry.note, note) if n))
            out.append(entry)
        return out

    async def close(self) -> None:
        for connection in self.connections:
            await connection.close()
        self.connections.clear()


def _plain(value: Any) -> Any:
    """JSON-friendly values for reports (enums by name, bytes as hex, uuids as text)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
