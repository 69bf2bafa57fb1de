"""`engines.node` ranges (`node_engines`) and the Node a lock is given (`nodejs.choose`,
`nodejs.requirements`): pure, no npm. The ranges are node-semver's, and the expected answers
are what `npx semver -r <range> <version>` prints for each row."""

from __future__ import annotations

import pytest

from kconform.fixtures.clients import nodejs
from kconform.fixtures.clients.node_engines import BadRange, alternatives, satisfies

RANGES = [  # (range, satisfied by, not satisfied by)
    (">= 22.22.0 || >= 24.6.0", ["22.22.0", "22.23.3", "24.6.0"], ["20.20.2", "22.21.9"]),
    (">= 22.19.0", ["22.19.0", "26.12.1"], ["22.18.9", "20.20.2"]),
    ("^20.17.0 || >=22.9.0", ["20.17.0", "20.20.2", "22.9.0"], ["20.16.9", "21.0.0", "22.8.0"]),
    (">=14.0.0", ["14.0.0", "20.20.2"], ["13.99.99"]),
    (">14", ["15.0.0"], ["14.99.0", "14.0.0"]),
    (">14.2", ["14.3.0"], ["14.2.9"]),
    (">14.2.0", ["14.2.1"], ["14.2.0"]),
    ("<18", ["17.9.9"], ["18.0.0"]),
    ("<=18", ["18.9.9"], ["19.0.0"]),
    ("<=18.1.2", ["18.1.2"], ["18.1.3"]),
    ("=18.1.2", ["18.1.2"], ["18.1.3"]),
    ("v18.1.2", ["18.1.2"], ["18.1.1"]),
    (">=14 <20", ["14.0.0", "19.9.9"], ["13.9.9", "20.0.0"]),
    (">= 14 < 20", ["19.9.9"], ["20.0.0"]),
    ("~1.2.3", ["1.2.3", "1.2.9"], ["1.2.2", "1.3.0"]),
    ("~1.2", ["1.2.0", "1.2.9"], ["1.3.0", "1.1.9"]),
    ("~1", ["1.0.0", "1.9.9"], ["2.0.0"]),
    ("^1.2.3", ["1.2.3", "1.9.0"], ["2.0.0", "1.2.2"]),
    ("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0"]),
    ("^0.0.3", ["0.0.3"], ["0.0.4"]),
    ("^0.x", ["0.0.0", "0.9.9"], ["1.0.0"]),
    ("^1.x", ["1.0.0"], ["2.0.0"]),
    ("22.x", ["22.0.0", "22.23.3"], ["21.9.9", "23.0.0"]),
    ("22.1.X", ["22.1.7"], ["22.2.0"]),
    ("22", ["22.5.0"], ["23.0.0"]),
    ("*", ["0.0.1", "26.0.0"], []),
    ("", ["26.0.0"], []),
    ("1.2 - 3", ["1.2.0", "3.9.9"], ["1.1.9", "4.0.0"]),
    ("1.2.3 - 2.3.4", ["1.2.3", "2.3.4"], ["2.3.5"]),
    ("12 - 14.1", ["12.0.0", "14.1.9"], ["14.2.0"]),
    (">=14.0.0-rc.1", ["14.0.0"], ["13.9.9"]),  # the tag dropped: Node releases have none
    (">*", [], ["1.0.0"]),
    ("<18 || >=20 <21", ["17.0.0", "20.5.0"], ["18.0.0", "21.0.0"]),
]


@pytest.mark.parametrize(("text", "yes", "no"), RANGES)
def test_a_range_admits_exactly_the_versions_semver_admits(
    text: str, yes: list[str], no: list[str]
) -> None:
    assert [v for v in yes if not satisfies(v, text)] == []
    assert [v for v in no if satisfies(v, text)] == []


@pytest.mark.parametrize("text", [">=x.y.z", "1.2.3.4", ">=22.a", "node >= 14"])
def test_a_range_that_is_not_semver_is_refused_naming_it(text: str) -> None:
    with pytest.raises(BadRange, match="not a version"):
        alternatives(text)


def test_a_range_that_does_not_parse_is_an_unmet_requirement() -> None:
    required = [("a@1.0.0", "node >= 14"), ("b@1.0.0", ">=14")]
    assert nodejs.unmet("20.20.2", required) == [("a@1.0.0", "node >= 14")]


LOCK = {  # a package-lock.json v3, shortened from @platformatic/kafka 2.12.1's
    "packages": {
        "": {"engines": {"node": ">=99"}},  # the root: kconform's own, not installed
        "node_modules/@platformatic/kafka": {"version": "2.12.1",
                                             "engines": {"node": ">= 22.22.0 || >= 24.6.0"}},
        "node_modules/@platformatic/dynamic-buffer": {"version": "0.3.1",
                                                      "engines": {"node": ">= 22.19.0"}},
        "node_modules/@node-rs/crc32-linux-x64-gnu": {"version": "1.10.8", "optional": True,
                                                      "engines": {"node": ">= 99"}},
        "node_modules/typescript": {"version": "5.0.0", "dev": True, "engines": {"node": ">=99"}},
        "node_modules/reusify": {"version": "1.1.0", "engines": {"iojs": ">=1.0.0"}},
        "node_modules/old": {"version": "0.1.0", "engines": ["node >= 0.4"]},  # npm 1's form
    }
}  # fmt: skip


def test_the_requirements_are_the_installed_packages_engines() -> None:
    assert nodejs.requirements(LOCK) == [
        ("@platformatic/dynamic-buffer@0.3.1", ">= 22.19.0"),
        ("@platformatic/kafka@2.12.1", ">= 22.22.0 || >= 24.6.0"),
    ]


NODES = ["18.20.0", "20.20.2", "22.9.0", "22.21.0", "22.22.0", "22.23.3", "24.6.0", "25.1.0"]


def test_the_node_chosen_is_the_newest_of_the_oldest_major_that_fits() -> None:
    required = nodejs.requirements(LOCK)
    assert nodejs.choose(required, NODES) == "22.23.3"
    assert nodejs.choose(required, [v for v in NODES if not v.startswith("22.")]) == "24.6.0"
    assert nodejs.choose([("x@1.0.0", "^20.17.0 || >=22.9.0")], NODES) == "20.20.2"
    assert nodejs.choose([], NODES) == "18.20.0"  # no engines: the oldest line's newest


def test_no_node_is_chosen_when_none_fits_every_requirement() -> None:
    required = [("a@1.0.0", ">=22"), ("b@1.0.0", "<22")]
    assert nodejs.choose(required, NODES) is None
    assert nodejs.choose([("a@1.0.0", ">=26")], NODES) is None


def test_the_lock_names_its_node_in_its_package_json() -> None:
    assert nodejs.locked({"dependencies": {}}) is None
    assert nodejs.locked({"kconform": {"node": "22.23.3"}}) == "22.23.3"
