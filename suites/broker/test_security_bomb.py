"""KIP-714 on the broker under decompression bombs (kip714.security.bomb.*): ruling 12.

A tiny zstd or gzip payload inflating to 64 MiB must leave the broker healthy (MUST) and should be
rejected rather than exported (SHOULD). Disruptive like the rest of the security suite: they run
after every other case of the target, after test_security.py's (file order).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kconform.codecs.compression import CompressionType
from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.errors import Inconclusive
from kconform.fixtures.targets.base import BrokerTarget, TargetError
from kconform.suites.broker.helpers import (
    session,
)
from kconform.suites.broker.helpers_security import (
    BOMB,
    TELEMETRY,
    answered,
    expect_alive,
    exported,
    fitting_bomb,
    push_answered,
)

# These cases may kill a fragile target (they do kill the librdkafka mock, which is its real
# behaviour): the plugin runs them after every other case of the same target.
pytestmark = pytest.mark.kconform_disruptive


async def push_bomb(
    check: Check, target: BrokerTarget, ctype: CompressionType
) -> tuple[int | None, int | None]:
    """Push a bomb fitting the broker's limit; its ErrorCode and how many pushes were exported."""
    connection, subscription = await session(check)
    if ctype not in subscription.accepted_compression_types:
        raise Inconclusive(f"the broker does not accept {ctype.name}")
    metrics, expanded = await asyncio.to_thread(
        fitting_bomb, ctype, subscription.telemetry_max_bytes
    )
    check.observe(f"{ctype.name} bomb: bytes as sent, as inflated", [len(metrics), expanded])
    code = await push_answered(check, connection, subscription, metrics, ctype)
    return code, await exported(target, subscription)


def _bomb_case(case_id: str, ctype: CompressionType) -> Any:
    name = ctype.name.lower()

    @case(
        case_id,
        rules=["kip714.robustness.healthy", "kip714.push.bomb_rejected"],
        title=f"A tiny {name} payload inflating to 64 MiB leaves the broker healthy",
        spec=BOMB,
        level=Level.MUST,
        requires=TELEMETRY,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        code, _ = await push_bomb(check, target, ctype)
        check.observe(
            "ErrorCode (ruling 12: INFO; Apache 4.1: TELEMETRY_TOO_LARGE)", answered(code)
        )
        await expect_alive(check, target, f"a {name} bomb")

    return test


BOMB_CASE = Family(_bomb_case)
test_bomb_zstd = BOMB_CASE("kip714.security.bomb.zstd", CompressionType.ZSTD)
test_bomb_gzip = BOMB_CASE("kip714.security.bomb.gzip", CompressionType.GZIP)


@case(
    "kip714.security.bomb.not_exported",
    rules=["kip714.push.bomb_rejected"],
    title="Decompression bombs are rejected with an error rather than exported",
    spec=BOMB,
    level=Level.SHOULD,
    requires=TELEMETRY,
)
async def test_bomb_not_exported(target: BrokerTarget, check: Check) -> None:
    for ctype in (CompressionType.ZSTD, CompressionType.GZIP):
        code, count = await push_bomb(check, target, ctype)
        try:  # a broker the bomb crashed neither rejected nor exported it; the MUST case fails it
            await asyncio.to_thread(target.check_alive)
        except TargetError as death:
            check.precondition(
                f"the broker survives the {ctype.name} bomb "
                f"(kip714.security.bomb.{ctype.name.lower()} judges a crash)",
                "alive", str(death), False,
            )  # fmt: skip
        check.expect(f"{ctype.name} bomb rejected", "an error code", answered(code), bool(code))
        if count is not None:
            check.expect(f"{ctype.name} bomb: pushes in the telemetry sink", 0, count)
    await expect_alive(check, target, "decompression bombs")
