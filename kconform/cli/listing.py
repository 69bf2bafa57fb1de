"""`kconform list`: every case the installed suites declare, with level, spec, title and the
rules it judges; filtered by kind, KIP, level, rule or what a target supports, so the ids to
pass to `--cases` are found without reading the suites."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kconform.cli.base import Command
from kconform.cli.selection import check_kip, check_rule
from kconform.errors import UsageError
from kconform.exit_codes import EXIT_OK

__all__ = ["COMMAND"]


def add_arguments(listing: argparse.ArgumentParser) -> None:
    listing.add_argument("--format", choices=("text", "json"), default="text",
                         help="text (default) or json (one object per case)")  # fmt: skip
    listing.add_argument("--kind", choices=("broker", "client"), default=None,
                         help="broker cases or client cases only")  # fmt: skip
    listing.add_argument("--kip", default=None,
                         help="one KIP's cases (filed under it or judging one of its rules): 511, "
                         "714, 977 or KIP-714; or fuzz")  # fmt: skip
    from kconform.plugin.option_table import add_options

    add_options(listing, "list")  # --level and --target, as the table declares them
    listing.add_argument(
        "--rule", default=None, help="cases judging this rule id, or a wildcard over rule ids"
    )


def _kip(text: str) -> str:
    """`714`, `kip714`, `KIP-714` -> KIP-714; a group without a KIP (`fuzz`) as it is."""
    digits = text.upper().removeprefix("KIP").lstrip("-")
    return f"KIP-{int(digits)}" if digits.isdigit() else text.lower()


def _target_capabilities(name: str) -> set[str]:
    """What an embedded target declares it can do; other kinds probe theirs when they start,
    so what they support is not known before a run."""
    from kconform.fixtures.targets.registry import (
        create_target,
        embedded_kinds,
        parse_targets,
        target_kind,
    )

    kind = name.split(":", 1)[0]
    target_kind(kind)  # UnknownTarget (a usage error) for a name no kind has
    if kind not in embedded_kinds():
        raise UsageError(
            f"--target {name}: its capabilities are probed when it starts, so `list` cannot "
            f"tell what it supports; embedded targets: {', '.join(embedded_kinds())}"
        )
    (spec,) = parse_targets(name, brokers=None, bootstrap=None)
    return {str(c) for c in create_target(spec).capabilities}


def _rule_kips(rules: list[str]) -> set[str]:
    """The KIPs whose rules a case judges: a case filed under KIP-714 may judge a rule of the
    KIP that extended it (KIP-1142's ListConfigResources), and `--kip 1142` lists it."""
    from kconform.rules import RULES

    return {RULES[r].kip for r in rules if r in RULES}


def filtered(cases: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The catalogue's cases that every filter given keeps."""
    import fnmatch

    keep = cases
    if args.kind:
        keep = [c for c in keep if c["kind"] == args.kind]
    if args.kip:
        kip = _kip(args.kip)
        check_kip(args.kip, kip, (c["kip"] for c in cases))
        keep = [c for c in keep if c["kip"] == kip or kip in _rule_kips(c["rules"])]
    if args.level != "all":  # must: MUST; should: MUST and SHOULD (engine.model.matches_level)
        levels = {"MUST"} if args.level == "must" else {"MUST", "SHOULD"}
        keep = [c for c in keep if c["level"] in levels]
    if args.rule:
        check_rule(args.rule, (r for c in cases for r in c["rules"]))
        keep = [c for c in keep if any(fnmatch.fnmatchcase(r, args.rule) for r in c["rules"])]
    if args.target:
        capabilities = _target_capabilities(args.target)
        keep = [c for c in keep if c["kind"] == "broker" and set(c["requires"]) <= capabilities]
    return keep


def run(args: argparse.Namespace) -> int:
    from kconform.runner import case_catalogue

    cases = filtered(case_catalogue(), args)
    if args.format == "json":
        print(json.dumps(cases, indent=1))
        return EXIT_OK
    for c in cases:
        print(f"{c['id']:<58} {c['level']:<6} {c['kind']:<6} {c['title']}")
        print(f"{'':<58} {'':<6} {'':<6} spec: {c['spec']}")
        print(f"{'':<58} {'':<6} {'':<6} rules: {', '.join(c['rules'])}")
    print(f"{len(cases)} cases")
    if args.kip and not cases:
        for line in _judged_elsewhere(_kip(args.kip)):
            print(line)
    return EXIT_OK


def _judged_elsewhere(kip: str) -> list[str]:
    """Where the rules of a KIP no case judges are judged (the rule book's `outside_suites`),
    so that '0 cases' is not read as 'nothing checks it'."""
    from kconform.rules import RULES

    return [f"{r.id}: no suite case; {r.outside_suites}" for r in RULES.values()
            if r.kip == kip and r.outside_suites]  # fmt: skip


COMMAND = Command(
    "list",
    "case ids with level, kind, spec reference, title and rules; filter by --kind, --kip, "
    "--level, --rule, --target",
    add_arguments,
    run,
)
