"""KIP-714 CLIENT_METRICS config resources: invalid values (kip714.configs.invalid.*).

The KIP defines the valid values, so a broker that stores anything else breaks it (MUST: rejected,
and nothing applied). The KIP names no error code for any of these, so the code Apache answers (§D)
is SHOULD, in its own `.error_code` case, through AlterConfigs and IncrementalAlterConfigs alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kconform.codecs.errors import ErrorCode, error_name
from kconform.engine.check import Check
from kconform.engine.model import Family, Level, case
from kconform.fixtures.targets.base import BrokerTarget
from kconform.suites.broker.helpers import (
    answer,
    eventually,
)
from kconform.suites.broker.helpers_configs import (
    ADMIN,
    BASE,
    CONFIGS,
    CONSUMER,
    PRODUCER,
    ConfigAdmin,
    config_admin,
    delete_later,
    normalized,
)

# --- invalid values: rejected (MUST), with Apache's code (SHOULD) -------------------------------


@dataclass(frozen=True)
class Invalid:
    title: str
    configs: Mapping[str, str]
    apache: ErrorCode  # §D, Kafka 4.1
    why: str  # the KIP text that makes the value invalid
    name: str | None = None  # a fixed resource name instead of a unique one
    code_note: str = ""


INVALID = {
    "interval_below_min": Invalid(
        "interval.ms 99 (below the minimum 100)", {**BASE, "interval.ms": "99"},
        ErrorCode.INVALID_REQUEST, "interval.ms 'minimum: 100'",
    ),
    "interval_above_max": Invalid(
        "interval.ms 3600001 (above the maximum 3600000)", {**BASE, "interval.ms": "3600001"},
        ErrorCode.INVALID_REQUEST, "interval.ms 'maximum: 3600000 (1 hour)'",
    ),
    "interval_not_integer": Invalid(
        "interval.ms 'bbb' (not an integer)", {**BASE, "interval.ms": "bbb"},
        ErrorCode.INVALID_CONFIG, "interval.ms is 'The client metrics push interval in ms'",
        code_note="Apache 4.0+ (KAFKA-17525); 3.7-3.9 answer UNKNOWN_SERVER_ERROR",
    ),
    "unknown_key": Invalid(
        "an unknown key", {**BASE, "colour": "red"},
        ErrorCode.INVALID_REQUEST, "'the allowed configs are: interval.ms, metrics and match'",
    ),
    "match_without_equals": Invalid(
        "a match entry without '='", {**BASE, "match": "client_id"},
        ErrorCode.INVALID_CONFIG, "match is 'A list of key-value pairs'",
    ),
    "match_unknown_selector": Invalid(
        "a match selector the KIP does not list", {**BASE, "match": "client_colour=red"},
        ErrorCode.INVALID_CONFIG, "match: 'The valid keys are: client_instance_id, ...'",
    ),
    "match_invalid_regex": Invalid(
        "a match value that is not a regular expression", {**BASE, "match": "client_id=(x"},
        ErrorCode.INVALID_CONFIG, "match: 'The values are anchored regular expressions'",
    ),
    "empty_name": Invalid(
        "an empty resource name", BASE, ErrorCode.INVALID_REQUEST,
        "'The ConfigResource has a name'", name="",
    ),
}  # fmt: skip


async def both_apis(
    check: Check, admin: ConfigAdmin, name: str, configs: Mapping[str, str]
) -> list[tuple[str, int, str | None]]:
    """Send `configs` through IncrementalAlterConfigs, then AlterConfigs; each one's answer."""
    if name:
        delete_later(check, admin, name)
    answers = [("IncrementalAlterConfigs", *await admin.incremental(name, configs))]
    answers.append(("AlterConfigs", *await admin.alter(name, configs)))
    return answers


REJECTED_BY = {
    "interval_below_min": "kip714.configs.interval_range",
    "interval_above_max": "kip714.configs.interval_range",
    "interval_not_integer": "kip714.configs.interval_integer",
    "unknown_key": "kip714.configs.known_keys",
    "match_without_equals": "kip714.configs.match_syntax",
    "match_unknown_selector": "kip714.configs.match_syntax",
    "match_invalid_regex": "kip714.configs.match_syntax",
    "empty_name": "kip714.configs.name_required",
}
"""The rule that makes each invalid change invalid."""


def _rejected_case(case_id: str, variant: str) -> Any:
    spec = INVALID[variant]

    @case(
        case_id,
        rules=[REJECTED_BY[variant]],
        title=f"CLIENT_METRICS with {spec.title} is rejected and not applied (both alter APIs)",
        spec=f"{CONFIGS}: {spec.why}",
        level=Level.MUST,
        requires=ADMIN,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        admin = await config_admin(check)
        name = check.unique("sub") if spec.name is None else spec.name
        for api, code, message in await both_apis(check, admin, name, spec.configs):
            check.expect(f"{api} rejects it", "an error code", answer(code, message), code != 0)
        check.expect("no subscription was created", False, name in await admin.listed())

    return test


def _code_case(case_id: str, variant: str) -> Any:
    spec = INVALID[variant]
    note = f" ({spec.code_note})" if spec.code_note else ""

    @case(
        case_id,
        rules=["kip714.configs.error_code"],
        title=f"CLIENT_METRICS with {spec.title} is answered {spec.apache.name}",
        spec=f"§D (Apache 4.1){note}; the KIP names no code, so SHOULD",
        level=Level.SHOULD,
        requires=ADMIN,
    )
    async def test(target: BrokerTarget, check: Check) -> None:
        admin = await config_admin(check)
        name = check.unique("sub") if spec.name is None else spec.name
        for api, code, message in await both_apis(check, admin, name, spec.configs):
            check.expect(f"{api} ErrorCode", spec.apache.name, answer(code, message),
                         code == spec.apache)  # fmt: skip

    return test


REJECTED, ERROR_CODE = Family(_rejected_case), Family(_code_case)
test_invalid_interval_below_min_rejected = REJECTED(
    "kip714.configs.invalid.interval_below_min.rejected", "interval_below_min"
)
test_invalid_interval_below_min_error_code = ERROR_CODE(
    "kip714.configs.invalid.interval_below_min.error_code", "interval_below_min"
)
test_invalid_interval_above_max_rejected = REJECTED(
    "kip714.configs.invalid.interval_above_max.rejected", "interval_above_max"
)
test_invalid_interval_above_max_error_code = ERROR_CODE(
    "kip714.configs.invalid.interval_above_max.error_code", "interval_above_max"
)
test_invalid_interval_not_integer_rejected = REJECTED(
    "kip714.configs.invalid.interval_not_integer.rejected", "interval_not_integer"
)
test_invalid_interval_not_integer_error_code = ERROR_CODE(
    "kip714.configs.invalid.interval_not_integer.error_code", "interval_not_integer"
)
test_invalid_unknown_key_rejected = REJECTED(
    "kip714.configs.invalid.unknown_key.rejected", "unknown_key"
)
test_invalid_unknown_key_error_code = ERROR_CODE(
    "kip714.configs.invalid.unknown_key.error_code", "unknown_key"
)
test_invalid_match_without_equals_rejected = REJECTED(
    "kip714.configs.invalid.match_without_equals.rejected", "match_without_equals"
)
test_invalid_match_without_equals_error_code = ERROR_CODE(
    "kip714.configs.invalid.match_without_equals.error_code", "match_without_equals"
)
test_invalid_match_unknown_selector_rejected = REJECTED(
    "kip714.configs.invalid.match_unknown_selector.rejected", "match_unknown_selector"
)
test_invalid_match_unknown_selector_error_code = ERROR_CODE(
    "kip714.configs.invalid.match_unknown_selector.error_code", "match_unknown_selector"
)
test_invalid_match_invalid_regex_rejected = REJECTED(
    "kip714.configs.invalid.match_invalid_regex.rejected", "match_invalid_regex"
)
test_invalid_match_invalid_regex_error_code = ERROR_CODE(
    "kip714.configs.invalid.match_invalid_regex.error_code", "match_invalid_regex"
)
test_invalid_empty_name_rejected = REJECTED(
    "kip714.configs.invalid.empty_name.rejected", "empty_name"
)
test_invalid_empty_name_error_code = ERROR_CODE(
    "kip714.configs.invalid.empty_name.error_code", "empty_name"
)


@case(
    "kip714.configs.invalid.change_keeps_previous",
    rules=["kip714.configs.interval_range", "kip714.configs.interval_integer"],
    title="A rejected change to an existing subscription leaves its configs as they were",
    spec=f"{CONFIGS}: interval.ms 'minimum: 100, maximum: 3600000'",
    level=Level.MUST,
    requires=ADMIN,
)
async def test_invalid_change_keeps_previous(target: BrokerTarget, check: Check) -> None:
    admin = await config_admin(check)
    name = check.unique("sub")
    delete_later(check, admin, name)
    configs = {"metrics": PRODUCER, "interval.ms": "1000"}
    code, _ = await admin.incremental(name, configs)
    check.require("valid subscription created", "NONE", error_name(code))
    for interval in ("99", "3600001", "bbb"):
        code, _ = await admin.incremental(name, {"interval.ms": interval})
        check.expect(
            f"SET interval.ms={interval} rejected", "an error", error_name(code), code != 0
        )
    code, _ = await admin.alter(name, {"metrics": CONSUMER, "interval.ms": "50"})
    check.expect("AlterConfigs interval.ms=50 rejected", "an error", error_name(code), code != 0)
    described = await eventually(lambda: admin.described(name), lambda d: "metrics" in d)
    check.expect("configs unchanged", normalized(configs), normalized(described))
