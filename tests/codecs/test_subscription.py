"""KIP-714 subscription resolution against hand-computed Java facts and, where a JDK is installed,
against Java itself: a small program compiled at test time runs HashSet, ConcurrentHashMap,
String.hashCode, CRC32C, java.util.regex and Kafka's subscription-id recipe on a seeded batch of
inputs, once per JVM, and every answer must equal the Python one."""

from __future__ import annotations

import glob
import itertools
import random
import re
import shutil
import string
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kconform.codecs.errors import ErrorCode
from kconform.codecs.subscription import (
    CLIENT_METRICS_RESOURCE_TYPE,
    SELECTOR_NAMES,
    ClientMetadata,
    ClientMetricsConfigError,
    ClientMetricsSubscription,
    SubscriptionMap,
    UnreproducibleOrderError,
    hashset_copy_capacity,
    java_hashset_order,
    java_host_address,
    java_regex,
    java_set_to_string,
    java_string_hash,
    java_trim,
    java_uuid_hash,
    kafka_uuid_str,
    matches,
    parse_client_metrics_config,
    resolve,
)

ZERO = uuid.UUID(int=0)
CLIENT = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")


def _metadata(instance_id: uuid.UUID = CLIENT, **overrides: Any) -> ClientMetadata:
    fields: dict[str, Any] = {
        "client_instance_id": instance_id,
        "client_id": "producer-1",
        "client_software_name": "apache-kafka-java",
        "client_software_version": "4.1.0",
        "client_source_address": "10.0.0.1",
        "client_source_port": 50123,
    }
    fields.update(overrides)
    return ClientMetadata(**fields)


def _crc32c_bitwise(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected 0x82F63B78), written out so the golden ids do not rely on
    the ``crc32c`` package the module uses."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _int32(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


# --- Java facts, by hand ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("a", 97),
        ("hello", 99162322),
        ("Aa", 2112),
        ("BB", 2112),
        ("polygenelubricants", -(2**31)),  # the classic Integer.MIN_VALUE hash
        ("\U0001f600", 0xD83D * 31 + 0xDE00),  # one non-BMP char is two UTF-16 units
    ],
)
def test_java_string_hash_golden(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


@pytest.mark.parametrize(
    ("msb", "lsb", "expected"),
    [
        (0, 0, 0),
        (0, 1, 1),  # Uuid.ONE_UUID
        (1 << 32, 0, 1),  # the high word folds onto the low one
        (0xFFFFFFFF_FFFFFFFF, 0, 0),  # (int)(-1 >> 32) ^ (int)-1
        (0x80000000_00000000, 0, -(2**31)),
        (
            0x12345678_9ABCDEF0,
            0x0FEDCBA9_87654321,
            _int32(0x12345678 ^ 0x9ABCDEF0 ^ 0x0FEDCBA9 ^ 0x87654321),
        ),
    ],
)
def test_java_uuid_hash_golden(msb: int, lsb: int, expected: int) -> None:
    assert java_uuid_hash(uuid.UUID(int=msb << 64 | lsb)) == expected


def test_kafka_uuid_str_is_unpadded_url_safe_base64() -> None:
    assert kafka_uuid_str(ZERO) == "A" * 22
    assert kafka_uuid_str(uuid.UUID(int=1)) == "A" * 21 + "Q"
    assert kafka_uuid_str(uuid.UUID(int=(1 << 128) - 1)) == "_" * 21 + "w"


def test_crc32c_check_value() -> None:
    assert _crc32c_bitwise(b"123456789") == 0xE3069283
    assert crc32c.crc32c(b"123456789") == 0xE3069283


def test_java_set_to_string() -> None:
    assert java_set_to_string([]) == "[]"
    assert java_set_to_string(["*"]) == "[*]"
    assert java_set_to_string(["a", "", "b"]) == "[a, , b]"


def test_java_trim_strips_controls_and_space_only() -> None:
    assert java_trim("\x00\t\n\x1f a b \r") == "a b"
    assert java_trim("\u00a0a\u2003") == "\u00a0a\u2003"  # Unicode spaces are kept


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("::1", "0:0:0:0:0:0:0:1"),
        ("2001:DB8::8:800:200C:417A", "2001:db8:0:0:8:800:200c:417a"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
    ],
)
def test_java_host_address(address: str, expected: str) -> None:
    assert java_host_address(address) == expected


def test_hashset_orders_by_bucket_not_insertion_nor_sorting() -> None:
    # "b" = 98 -> bucket 2; "q" = 113 and "a" = 97 both -> bucket 1, kept in insertion order.
    assert java_hashset_order(["b", "q", "a"]) == ["q", "a", "b"]


def test_hashset_spreads_the_high_half() -> None:
    # hash("hello") = 0x05E918D2: bucket 2 unspread, (0x18D2 ^ 0x05E9) & 15 = 11 spread.
    # "l" = 108 is bucket 12, "k" = 107 is bucket 11 (before "hello", inserted earlier).
    assert java_hashset_order(["hello", "l", "b"]) == ["b", "hello", "l"]
    assert java_hashset_order(["k", "hello"]) == ["k", "hello"]


def test_hashset_resize_splits_buckets_keeping_order() -> None:
    # "a" 97, "A" 65, "q" 113, "Q" 81 share bucket 1 of 16; at 32 buckets "q" and "Q" move to 17.
    fillers = list("bcdefghij")  # buckets 2..10 at either size
    assert java_hashset_order(["q", "Q", "a", "A", *fillers[:8]]) == [
        "q",
        "Q",
        "a",
        "A",
        *fillers[:8],
    ]
    # the 13th element pushes the table past 12 and splits bucket 1
    assert java_hashset_order(["q", "Q", "a", "A", *fillers]) == ["a", "A", *fillers, "q", "Q"]


def test_hashset_colliding_hashes_keep_insertion_order() -> None:
    assert java_hashset_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert java_hashset_order(["Aa", "BB"]) == ["Aa", "BB"]


COLLIDERS = ["".join(blocks) for blocks in itertools.product(("Aa", "BB"), repeat=4)]


def test_hashset_treeified_bin_is_refused() -> None:
    assert len({java_string_hash(s) for s in COLLIDERS}) == 1
    # 9 and 10 colliders only grow the table (16 -> 32 -> 64); the 11th would be treeified
    assert java_hashset_order(COLLIDERS[:10]) == COLLIDERS[:10]
    with pytest.raises(UnreproducibleOrderError):
        java_hashset_order(COLLIDERS[:11])


def test_concurrent_hashmap_resize_reverses_the_head_of_a_bin() -> None:
    # ConcurrentHashMap grows as the 12th key arrives; bucket 1 [a, A, Q, q] splits with the tail
    # [Q, q] (all bound for bucket 17) moved as is and the head [a, A] pushed front-first.
    subscriptions = SubscriptionMap()
    for name in ["a", "A", "Q", "q", *"bcdefghi"]:
        subscriptions.put(ClientMetricsSubscription(name))
    assert [s.name for s in subscriptions.values()] == ["A", "a", *"bcdefghi", "Q", "q"]
    # HashMap instead keeps the order and only grows at the 13th key
    assert java_hashset_order(["a", "A", "Q", "q", *"bcdefghi"]) == [
        "a",
        "A",
        "Q",
        "q",
        *"bcdefghi",
    ]


def test_hashset_copy_capacity_differs_by_jdk() -> None:
    assert [hashset_copy_capacity(n, jdk=17) for n in (0, 11, 12, 24)] == [16, 16, 17, 33]
    assert [hashset_copy_capacity(n, jdk=21) for n in (0, 11, 12, 24)] == [16, 16, 16, 32]


def test_copy_capacity_changes_the_resolved_order() -> None:
    # Twelve metrics in one subscription: JDK 21 copies them into 16 buckets, JDK 17 into 32.
    # "q" (113) and "a" (97) share bucket 1 of 16 but not of 32, so JDK 17 yields "a" first.
    metrics = ("q", "a", *"bcdefghijk")
    subscription = ClientMetricsSubscription("s", metrics)
    jdk21 = resolve([subscription], _metadata(), jdk=21)
    jdk17 = resolve([subscription], _metadata(), jdk=17)
    assert jdk21.requested_metrics[:2] == ("q", "a")
    assert jdk17.requested_metrics[:2] == ("a", "q")
    assert jdk21.subscription_id != jdk17.subscription_id


@given(st.lists(st.text(max_size=6), max_size=40))
def test_hashset_order_is_a_permutation_of_the_distinct_items(items: list[str]) -> None:
    try:
        order = java_hashset_order(items)
    except UnreproducibleOrderError:
        return
    assert sorted(order) == sorted(set(items))


# --- resolve ---------------------------------------------------------------------------------


def _expected_id(text: str, instance_id: uuid.UUID) -> int:
    return _int32(_crc32c_bitwise(text.encode())) ^ java_uuid_hash(instance_id)


def test_no_subscription_gives_empty_metrics_and_default_interval() -> None:
    resolved = resolve([], _metadata(ZERO))
    assert resolved.requested_metrics == ()
    assert resolved.push_interval_ms == 300_000
    assert resolved.subscription_id == _int32(_crc32c_bitwise(b"[]300000"))


def test_star_collapses_the_union() -> None:
    subscriptions = [
        ClientMetricsSubscription("a", ("org.apache.kafka.producer.", "*"), 60_000),
        ClientMetricsSubscription("b", ("org.apache.kafka.consumer.",), 30_000),
    ]
    resolved = resolve(subscriptions, _metadata())
    assert resolved.requested_metrics == ("*",)
    assert resolved.push_interval_ms == 30_000
    assert resolved.subscription_id == _expected_id("[*]30000", CLIENT)


def test_union_is_deduplicated_in_hashset_order() -> None:
    subscriptions = [
        ClientMetricsSubscription("x", ("c", "a", "a")),
        ClientMetricsSubscription("y", ("b", "a")),
    ]
    resolved = resolve(subscriptions, _metadata())
    assert resolved.requested_metrics == ("a", "b", "c")
    assert resolved.subscription_id == _expected_id("[a, b, c]300000", CLIENT)


def test_interval_is_the_least_of_the_matching_subscriptions() -> None:
    subscriptions = [
        ClientMetricsSubscription("slow", ("m",), 5_000),
        ClientMetricsSubscription("fast", ("m",), 1_000),
        ClientMetricsSubscription("other", ("m",), 100, {"client_id": "consumer-.*"}),
    ]
    assert resolve(subscriptions, _metadata()).push_interval_ms == 1_000


@pytest.mark.parametrize(
    ("selector", "full", "partial"),
    [
        ("client_instance_id", kafka_uuid_str(CLIENT), kafka_uuid_str(CLIENT)[:10]),
        ("client_id", "producer-[0-9]+", "producer"),
        ("client_software_name", "apache-kafka-.*", "kafka"),
        ("client_software_version", r"4\.1\..*", r"4\.1"),
        ("client_source_address", r"10\.0\.0\.1", "10"),
        ("client_source_port", "50[0-9]{3}", "50"),
    ],
)
def test_each_selector_must_match_in_full(selector: str, full: str, partial: str) -> None:
    assert selector in SELECTOR_NAMES
    assert matches(ClientMetricsSubscription("s", match={selector: full}), _metadata())
    assert not matches(ClientMetricsSubscription("s", match={selector: partial}), _metadata())


def test_every_selector_must_match() -> None:
    both = {"client_id": "producer-1", "client_software_name": "librdkafka"}
    assert not matches(ClientMetricsSubscription("s", match=both), _metadata())
    assert matches(ClientMetricsSubscription("s", match={}), _metadata())
    assert not matches(ClientMetricsSubscription("s", match={"rack": ".*"}), _metadata())


def test_subscription_id_tracks_metrics_and_interval_only() -> None:
    base = resolve([ClientMetricsSubscription("s", ("a", "b"), 1_000)], _metadata())
    assert resolve([ClientMetricsSubscription("s", ("b", "a"), 1_000)], _metadata()) == base
    assert resolve([ClientMetricsSubscription("t", ("a", "b"), 1_000)], _metadata()) == base
    changed_metrics = resolve([ClientMetricsSubscription("s", ("a",), 1_000)], _metadata())
    changed_interval = resolve([ClientMetricsSubscription("s", ("a", "b"), 2_000)], _metadata())
    assert changed_metrics.subscription_id != base.subscription_id
    assert changed_interval.subscription_id != base.subscription_id
    other_client = resolve([ClientMetricsSubscription("s", ("a", "b"), 1_000)], _metadata(ZERO))
    assert other_client.subscription_id ^ base.subscription_id == java_uuid_hash(CLIENT)


def test_lone_surrogates_are_encoded_as_question_marks() -> None:
    # String.getBytes(UTF_8) replaces an unpaired surrogate with '?'; a pair is one character
    lone = resolve([ClientMetricsSubscription("s", ("\ud800",))], _metadata(ZERO))
    assert lone.subscription_id == _int32(_crc32c_bitwise(b"[?]300000"))
    paired = resolve([ClientMetricsSubscription("s", ("\ud83d\ude00",))], _metadata(ZERO))
    assert paired.subscription_id == _int32(_crc32c_bitwise("[\U0001f600]300000".encode()))


def test_subscriptions_are_hashable_values() -> None:
    first = ClientMetricsSubscription("s", ("a",), 1_000, {"client_id": "x"})
    assert first == ClientMetricsSubscription("s", ("a",), 1_000, {"client_id": "x"})
    assert len({first, ClientMetricsSubscription("s", ("a",), 1_000, {"client_id": "x"})}) == 1


def test_rejected_update_leaves_the_map_alone() -> None:
    broker = SubscriptionMap()
    broker.update("s", {"metrics": "a"})
    with pytest.raises(ClientMetricsConfigError):
        broker.update("s", {"metrics": "b", "interval.ms": "50"})
    assert broker.values() == [ClientMetricsSubscription("s", ("a",))]


def test_two_brokers_agree_on_the_id() -> None:
    updates: list[tuple[str, dict[str, str | None]]] = [
        ("producers", {"metrics": "org.apache.kafka.producer.", "interval.ms": "10000"}),
        ("everyone", {"metrics": "org.apache.kafka.consumer.,org.apache.kafka.producer."}),
        ("gone", {"metrics": "x"}),
        ("gone", {"metrics": None}),
    ]
    brokers = [SubscriptionMap(), SubscriptionMap()]
    for broker in brokers:
        for name, configs in updates:
            broker.update(name, configs)
    first, second = (broker.resolve(_metadata()) for broker in brokers)
    assert first == second
    assert [s.name for s in brokers[0].values()] == ["everyone", "producers"]  # "gone" removed
    assert first.push_interval_ms == 10_000


# --- CLIENT_METRICS configs (§D, Kafka 4.1) ---------------------------------------


def _config_error(name: str, configs: dict[str, str | None]) -> ClientMetricsConfigError:
    with pytest.raises(ClientMetricsConfigError) as caught:
        parse_client_metrics_config(name, configs)
    return caught.value


def test_resource_type_is_16() -> None:
    assert CLIENT_METRICS_RESOURCE_TYPE == 16


def test_d_empty_name_is_invalid_request() -> None:
    error = _config_error("", {"metrics": "*"})
    assert error.error_code is ErrorCode.INVALID_REQUEST
    assert error.message == "Subscription name can't be empty"


def test_d_unknown_key_is_invalid_request() -> None:
    error = _config_error("s", {"metrics": "*", "push.interval.ms": "1000"})
    assert error.error_code is ErrorCode.INVALID_REQUEST
    assert "Unknown client metrics configuration" in error.message


@pytest.mark.parametrize("value", ["99", "3600001", "0", "-100"])
def test_d_interval_out_of_range_is_invalid_request(value: str) -> None:
    assert _config_error("s", {"interval.ms": value}).error_code is ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("value", ["100", "3600000", " 1000\t", "+500"])
def test_d_interval_in_range_is_accepted(value: str) -> None:
    parsed = parse_client_metrics_config("s", {"interval.ms": value})
    assert parsed.interval_ms == int(value.strip())


@pytest.mark.parametrize("value", ["abc", "1.5", "", " ", "1e3", "1_000", "0x64", "2147483648"])
def test_d_interval_not_an_integer_is_invalid_config(value: str) -> None:
    assert _config_error("s", {"interval.ms": value}).error_code is ErrorCode.INVALID_CONFIG


@pytest.mark.parametrize("entry", ["client_id", "client_id=a=b", "=", "client_id==", "x"])
def test_d_match_entry_not_two_parts_is_invalid_config(entry: str) -> None:
    error = _config_error("s", {"match": entry})
    assert error.error_code is ErrorCode.INVALID_CONFIG
    assert error.message == f"Illegal client matching pattern: {entry}"


def test_d_match_trailing_equals_are_dropped_by_string_split() -> None:
    # String.split("=") drops trailing empty strings, so only an inner '=' is rejected
    parsed = parse_client_metrics_config("s", {"match": "client_id=abc=="})
    assert parsed.match == {"client_id": "abc"}


@pytest.mark.parametrize("entry", ["rack=a", "CLIENT_ID=a", "=a", "client-id=a"])
def test_d_match_unknown_selector_is_invalid_config(entry: str) -> None:
    assert _config_error("s", {"match": entry}).error_code is ErrorCode.INVALID_CONFIG


@pytest.mark.parametrize("regex", ["(", "[a", "a{", "*a", "(?P<n>a)"])
def test_d_match_invalid_regex_is_invalid_config(regex: str) -> None:
    error = _config_error("s", {"match": f"client_id={regex}"})
    assert error.error_code is ErrorCode.INVALID_CONFIG


def test_d_names_and_values_are_trimmed() -> None:
    parsed = parse_client_metrics_config(
        "s", {"match": " client_id = producer-.* ,client_source_port=\t9092 "}
    )
    assert parsed.match == {"client_id": "producer-.*", "client_source_port": "9092"}


def test_d_list_parsing_trims_and_keeps_empty_entries() -> None:
    assert parse_client_metrics_config("s", {"metrics": " a , b,,c , "}).metrics == (
        "a",
        "b",
        "",
        "c",
        "",
    )
    assert parse_client_metrics_config("s", {"metrics": " \t"}).metrics == ()
    assert parse_client_metrics_config("s", {"metrics": "*"}).metrics == ("*",)


def test_d_defaults_and_deleted_keys() -> None:
    parsed = parse_client_metrics_config("s", {"metrics": None, "interval.ms": None})
    assert parsed == ClientMetricsSubscription("s", (), 300_000, {})


def test_d_interval_is_checked_before_match() -> None:
    error = _config_error("s", {"interval.ms": "5", "match": "rack=a"})
    assert error.error_code is ErrorCode.INVALID_REQUEST


def test_d_metrics_values_are_not_validated() -> None:
    assert parse_client_metrics_config("s", {"metrics": "= ,(,{"}).metrics == ("=", "(", "{")


# --- Java as the oracle ----------------------------------------------------------------------

JAVA_ORACLE = r"""
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/** One command per stdin line, one answer per stdout line; strings travel as UTF-8 hex. */
public class KconformOracle {
    static final Pattern LIST_SEPARATOR = Pattern.compile("\\s*,\\s*");

    static String dec(String hex) {
        if (hex.equals("-")) return "";
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new String(b, StandardCharsets.UTF_8);
    }

    static String enc(String s) {
        if (s.isEmpty()) return "-";
        StringBuilder out = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            out.append(String.format("%02x", x & 0xff));
        }
        return out.toString();
    }

    static String list(Collection<String> items) {
        StringBuilder out = new StringBuilder(Integer.toString(items.size()));
        for (String s : items) out.append(' ').append(enc(s));
        return out.toString();
    }

    static List<String> decAll(String[] words, int from, int to) {
        List<String> out = new ArrayList<>();
        for (int i = from; i < to; i++) out.add(dec(words[i]));
        return out;
    }

    static int uuidHash(long msb, long lsb) {
        long x = msb ^ lsb;
        return (int) (x >> 32) ^ (int) x;
    }

    static String answer(String line) throws Exception {
        String[] w = line.split(" ");
        switch (w[0]) {
            case "hash": return Integer.toString(dec(w[1]).hashCode());
            case "trim": return enc(dec(w[1]).trim());
            case "crc": {
                CRC32C crc = new CRC32C();
                crc.update(dec(w[1]).getBytes(StandardCharsets.UTF_8));
                return Long.toString(crc.getValue());
            }
            case "uuid": {
                long msb = Long.parseUnsignedLong(w[1], 16), lsb = Long.parseUnsignedLong(w[2], 16);
                byte[] raw = ByteBuffer.allocate(16).putLong(msb).putLong(lsb).array();
                String text = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
                return text + " " + uuidHash(msb, lsb);
            }
            case "set": {
                List<String> items = decAll(w, 2, w.length);
                Set<String> set;
                if (w[1].equals("copy")) set = new HashSet<>(items);
                else { set = new HashSet<>(); for (String s : items) set.add(s); }
                return list(set);
            }
            case "chm": {
                Map<String, String> map = new ConcurrentHashMap<>();
                for (int i = 1; i < w.length; i++) {
                    String key = dec(w[i].substring(1));
                    if (w[i].charAt(0) == '+') map.put(key, "v" + i); else map.remove(key);
                }
                return list(map.keySet());
            }
            case "sub": {
                // sub MSB LSB ; NAME INTERVAL MATCHED METRIC... ; ...  (put in order, resolve)
                long msb = Long.parseUnsignedLong(w[1], 16), lsb = Long.parseUnsignedLong(w[2], 16);
                Map<String, Object[]> subscriptions = new ConcurrentHashMap<>();
                for (int i = 3; i < w.length; ) {
                    int end = i + 1;
                    while (end < w.length && !w[end].equals(";")) end++;
                    Set<String> metrics = new HashSet<>(decAll(w, i + 4, end));
                    Object[] info = {Integer.parseInt(w[i + 2]), w[i + 3].equals("1"), metrics};
                    subscriptions.put(dec(w[i + 1]), info);
                    i = end;
                }
                int interval = 300000;
                boolean all = false;
                Set<String> union = new HashSet<>();
                for (Object[] s : subscriptions.values()) {
                    if (!(Boolean) s[1]) continue;
                    @SuppressWarnings("unchecked") Set<String> metrics = (Set<String>) s[2];
                    all = all || metrics.contains("*");
                    union.addAll(metrics);
                    interval = Math.min(interval, (Integer) s[0]);
                }
                if (all) { union.clear(); union.add("*"); }
                CRC32C crc = new CRC32C();
                crc.update((union.toString() + interval).getBytes(StandardCharsets.UTF_8));
                int id = (int) crc.getValue() ^ uuidHash(msb, lsb);
                return id + " " + interval + " " + list(union);
            }
            case "regex": {
                Pattern p;
                try { p = Pattern.compile(dec(w[1])); } catch (RuntimeException e) { return "ERR"; }
                return p.matcher(dec(w[2])).matches() ? "1" : "0";
            }
            case "int":
                try { return Integer.toString(Integer.parseInt(dec(w[1]).trim())); }
                catch (NumberFormatException e) { return "NFE"; }
            case "list": {
                String trimmed = dec(w[1]).trim();
                if (trimmed.isEmpty()) return list(List.of());
                return list(Arrays.asList(LIST_SEPARATOR.split(trimmed, -1)));
            }
            case "split": return list(Arrays.asList(dec(w[1]).split("=")));
            case "addr": return InetAddress.getByName(dec(w[1])).getHostAddress();
            default: throw new IllegalArgumentException(line);
        }
    }

    public static void main(String[] argv) throws Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        StringBuilder out = new StringBuilder(System.getProperty("java.specification.version"));
        out.append('\n');
        for (String line; (line = in.readLine()) != null; ) out.append(answer(line)).append('\n');
        System.out.print(out);
    }
}
"""


def _hex(text: str) -> str:
    return text.encode().hex() or "-"


def _unhex(token: str) -> str:
    return "" if token == "-" else bytes.fromhex(token).decode()


def _strings(answer: str) -> list[str]:
    count, *tokens = answer.split(" ")
    assert int(count) == len(tokens)
    return [_unhex(token) for token in tokens]


_ALPHABET = string.ascii_letters + string.digits + "._-"
_EXOTIC = ["é", "ß", "中", "\U0001f600", "\U0001d11e", "\u00a0", " ", "=", "Aa", "BB"]


def _word(rng: random.Random, low: int = 0, high: int = 10) -> str:
    return "".join(
        rng.choice(_ALPHABET) if rng.random() < 0.9 else rng.choice(_EXOTIC)
        for _ in range(rng.randint(low, high))
    )


def _metric_pool(rng: random.Random, size: int) -> list[str]:
    prefixes = ["org.apache.kafka.producer.", "org.apache.kafka.consumer.", "", "*"]
    return [rng.choice(prefixes) + _word(rng) if rng.random() > 0.02 else "*" for _ in range(size)]


def _build_cases() -> dict[str, list[tuple[Any, str]]]:
    """Every oracle input, keyed by command, seeded so a failure reproduces."""
    rng = random.Random(714)
    cases: dict[str, list[tuple[Any, str]]] = {}

    def add(kind: str, payload: Any, *words: str) -> None:
        cases.setdefault(kind, []).append((payload, " ".join([kind, *words])))

    for _ in range(300):
        text = _word(rng, 0, 24)
        add("hash", text, _hex(text))
        if rng.random() < 0.3:
            add("crc", text, _hex(text))
    for _ in range(100):
        value = uuid.UUID(int=rng.getrandbits(128))
        add("uuid", value, f"{value.int >> 64:016x}", f"{value.int & (2**64 - 1):016x}")
    sequences: list[list[str]] = []
    for _ in range(220):
        pool = [_word(rng, 0, 8) for _ in range(rng.randint(1, 70))]
        sequences.append([rng.choice(pool) for _ in range(rng.randint(0, 80))])
    for _ in range(40):  # hash-colliding strings crowd one bucket
        items = rng.sample(COLLIDERS, rng.randint(2, 8))
        items += [_word(rng) for _ in range(rng.randint(0, 30))]
        rng.shuffle(items)
        sequences.append(items)
    for crowd in (8, 9, 10):  # 9 and 10 in one bucket grow a small table early, twice
        sequences.append(COLLIDERS[:crowd] + list("abcdefgh"))
    sequences += [list(map(str, range(n))) for n in (11, 12, 13, 23, 24, 25, 48, 49)]
    for items in sequences:
        add("set", items, "new", *map(_hex, items))
        add("set", items, "copy", *map(_hex, items))
    for _ in range(150):
        pool = [_word(rng, 1, 8) for _ in range(rng.randint(1, 40))]
        ops = [
            ("+" if rng.random() < 0.8 else "-") + rng.choice(pool)
            for _ in range(rng.randint(1, 70))
        ]
        add("chm", ops, *(op[0] + _hex(op[1:]) for op in ops))
    for head in (8, 9):  # 8 colliders then a re-put of the 8th; 9 colliders (tryPresize to 128)
        ops = ["+" + name for name in COLLIDERS[:head]] + ["+" + _word(rng, 1, 6) for _ in range(5)]
        ops += ["+" + COLLIDERS[head - 1]]
        add("chm", ops, *(op[0] + _hex(op[1:]) for op in ops))
    for _ in range(300):
        instance = uuid.UUID(int=rng.getrandbits(128))
        pool = _metric_pool(rng, rng.randint(1, 40))
        subscriptions = []
        for _ in range(rng.randint(0, 6)):
            name = (
                _word(rng, 1, 6)
                if rng.random() > 0.05 or not subscriptions
                else subscriptions[0][0]
            )
            interval = rng.choice(
                [100, 1_000, 5_000, 60_000, 300_000, 3_600_000, rng.randint(100, 10**6)]
            )
            size = rng.choice([0, 1, 3, 12, 24, 25, rng.randint(0, 40)])
            metrics = [rng.choice(pool) for _ in range(size)]
            subscriptions.append((name, interval, rng.random() < 0.8, metrics))
        words = [f"{instance.int >> 64:016x}", f"{instance.int & (2**64 - 1):016x}"]
        for name, interval, matched, metrics in subscriptions:
            words += [";", _hex(name), str(interval), "1" if matched else "0", *map(_hex, metrics)]
        add("sub", (instance, subscriptions), *words)
    for pattern in REGEX_PATTERNS:
        for subject in REGEX_SUBJECTS:
            add("regex", (pattern, subject), _hex(pattern), _hex(subject))
    for text in INT_TEXTS:
        add("int", text, _hex(text))
    for text in LIST_TEXTS:
        add("list", text, _hex(text))
        add("trim", text, _hex(text))
    for entry in MATCH_ENTRIES + [
        "=".join(
            rng.choice(["client_id", "", " ", "a", "(", "client_id "])
            for _ in range(rng.randint(1, 4))
        )
        for _ in range(60)
    ]:
        add("split", entry, _hex(entry))
    for address in ADDRESSES:
        add("addr", address, _hex(address))
    return cases


REGEX_PATTERNS = [
    "", "abc", "a.c", ".*", "a|ab", "(a|b)+", "[a-c]+", "[^a-c]+", "[]a]", "[^]a]", "a]", "a}",
    "x{2}", "x{2,}", "x{1,3}", "a{2}+", "a{2}?", "a{", "{", "x{a}", "a{,3}", r"\d+", r"\w+",
    r"\s", r"\b\w+\b", "(?i)abc", "(?i)é", r"(?<n>a)\k<n>", r"\Qa.b\E", r"\Qa.b", r"a\z",
    r"a\Z", r"\h", r"\v", r"\R", r"[\h]", r"\e", r"\cA", r"\0101", r"\0", r"\x41", r"\u0041",
    "(?>a+)a", "a*+a", "a++", "(?#c)a", "(?P<n>a)", "(", ")", "[", "\\", "a**", "*a", "(?s).",
    "(?m)^a$", "(?x) a b ", r"[0-9]+\.[0-9]+(\.[0-9]+)?", r"\d{1,3}(\.\d{1,3}){3}",
    "client-[0-9a-f]{8}", "apache-kafka-.*",
]  # fmt: skip
REGEX_SUBJECTS = [
    "", "a", "ab", "abc", "ABC", "aXc", "a]", "]", "xx", "xxx", "a.b", "aXb", "é", "É", "\u0663",
    "12", "a\n", "a\r\n", "\n", "\r", "\x0b", " ", "\t", "\u00a0", "\x1b", "\x01", "A", "aa",
    "aaa", "a b", "1.2.3", "10.0.0.1", "client-0123abcd", "apache-kafka-java", "{", "a{",
]  # fmt: skip
INT_TEXTS = [
    "100", " 100 ", "+100", "-5", "1_000", "1e3", "", " ", "0x10", "\u0663\u0660\u0660",
    "\uff11\uff12\uff13", "2147483647", "2147483648", "-2147483648", "3600000", "1 0",
    "\t300\n", "\u00a0100", "00100", "+", "-", "1.0",
    "0" * 5000 + "100", "1" * 5000, "-0", "+-1", "\u0663" * 11,
]  # fmt: skip
LIST_TEXTS = [
    "", " ", "a", "a,b", " a , b ", "a,,b", ",a", "a,", ",", " , ", "a\t,\nb", "a\u00a0,b",
    "a b,c", "\x00a,b\x1f", "*", "a ,\x0b b",
]  # fmt: skip
MATCH_ENTRIES = [
    "client_id", "client_id=", "client_id=a", "=a", "client_id==", "client_id=a=",
    "client_id=a=b", "client_id = a", "client_id=a==", "==", "=", "", "client_id= ",
    "client_idd=a", "client_id=\t(",
]  # fmt: skip
ADDRESSES = [
    "127.0.0.1", "::1", "::", "::ffff:10.0.0.1", "2001:db8::1", "2001:DB8:0:0:8:800:200C:417A",
    "fe80::1%1", "0:0:0:0:0:0:0:1",
]  # fmt: skip
CASES = _build_cases()


def _jvms() -> list[tuple[int, str]]:
    """A ``java`` for each HashSet(Collection) sizing regime (JDK 17-18, 19+), PATH's first."""
    chosen: dict[bool, tuple[int, str]] = {}
    for candidate in [shutil.which("java"), *sorted(glob.glob("/usr/lib/jvm/*/bin/java"))]:
        if candidate is None:
            continue
        java = Path(candidate).resolve()
        release = java.parent.parent / "release"
        found = (
            re.search(r'JAVA_VERSION="(\d+)', release.read_text()) if release.is_file() else None
        )
        if found is not None and int(found[1]) >= 17:
            chosen.setdefault(int(found[1]) >= 19, (int(found[1]), str(java)))
    return sorted(chosen.values())


@dataclass
class Oracle:
    jdk: int
    answers: dict[str, list[str]]

    def pairs(self, kind: str) -> list[tuple[Any, str]]:
        return [
            (payload, answer)
            for (payload, _), answer in zip(CASES[kind], self.answers[kind], strict=True)
        ]


@pytest.fixture(scope="session")
def oracle_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not installed, so the Java oracle cannot be built")
    directory = tmp_path_factory.mktemp("java-oracle")
    source = directory / "KconformOracle.java"
    source.write_text(JAVA_ORACLE, encoding="utf-8")
    subprocess.run(
        [javac, "--release", "17", "-d", str(directory), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return directory


@pytest.fixture(
    scope="session", params=_jvms() or [None], ids=lambda jvm: f"jdk{jvm[0]}" if jvm else "nojdk"
)
def oracle(request: pytest.FixtureRequest, oracle_classes: Path) -> Oracle:
    if request.param is None:
        pytest.skip("no JDK 17+ java found")
    jdk, java = request.param
    commands = [command for kind in CASES for _, command in CASES[kind]]
    done = subprocess.run(
        [java, "-cp", str(oracle_classes), "KconformOracle"],
        input="\n".join(commands) + "\n",
        capture_output=True,
        encoding="utf-8",
        timeout=300,
        check=True,
    )
    version, *lines = done.stdout.split("\n")[:-1]
    assert version == str(jdk) and len(lines) == len(commands), done.stderr
    answers, start = {}, 0
    for kind in CASES:
        answers[kind] = lines[start : start + len(CASES[kind])]
        start += len(CASES[kind])
    return Oracle(jdk, answers)


def _compare(
    pairs: list[tuple[Any, str]], python: Callable[[Any], Any], java: Callable[[str], Any]
) -> int:
    """Assert Python equals Java on each pair; returns how many were comparable."""
    compared = 0
    for payload, answer in pairs:
        try:
            expected = python(payload)
        except UnreproducibleOrderError:
            continue
        assert expected == java(answer), payload
        compared += 1
    return compared


@pytest.mark.differential
def test_oracle_string_hash_uuid_and_crc(oracle: Oracle) -> None:
    assert _compare(oracle.pairs("hash"), java_string_hash, int) == len(CASES["hash"])
    _compare(oracle.pairs("crc"), lambda text: crc32c.crc32c(text.encode()), int)
    _compare(
        oracle.pairs("uuid"),
        lambda value: (kafka_uuid_str(value), java_uuid_hash(value)),
        lambda answer: (answer.split()[0], int(answer.split()[1])),
    )


@pytest.mark.differential
def test_oracle_hashset_order(oracle: Oracle) -> None:
    new = [
        (p, a)
        for (p, c), a in zip(CASES["set"], oracle.answers["set"], strict=True)
        if c.split()[1] == "new"
    ]
    copy = [
        (p, a)
        for (p, c), a in zip(CASES["set"], oracle.answers["set"], strict=True)
        if c.split()[1] == "copy"
    ]
    assert _compare(new, java_hashset_order, _strings) == len(new)
    compared = _compare(
        copy,
        lambda items: java_hashset_order(items, hashset_copy_capacity(len(items), oracle.jdk)),
        _strings,
    )
    assert compared == len(copy) - 1  # 10 crowded keys in a 32-bucket copy: Java treeifies


@pytest.mark.differential
def test_oracle_concurrent_hashmap_order(oracle: Oracle) -> None:
    def python(ops: list[str]) -> list[str]:
        subscriptions = SubscriptionMap()
        for op in ops:
            if op[0] == "+":
                subscriptions.put(ClientMetricsSubscription(op[1:]))
            else:
                subscriptions.remove(op[1:])
        return [s.name for s in subscriptions.values()]

    assert _compare(oracle.pairs("chm"), python, _strings) >= len(CASES["chm"]) - 1


@pytest.mark.differential
def test_oracle_subscription_id(oracle: Oracle) -> None:
    def python(payload: Any) -> tuple[int, int, list[str]]:
        instance, subscriptions = payload
        broker = SubscriptionMap()
        for name, interval, matched, metrics in subscriptions:
            match = {} if matched else {"client_id": "nobody"}
            broker.put(ClientMetricsSubscription(name, tuple(metrics), interval, match))
        resolved = broker.resolve(_metadata(instance), jdk=oracle.jdk)
        return resolved.subscription_id, resolved.push_interval_ms, list(resolved.requested_metrics)

    def java(answer: str) -> tuple[int, int, list[str]]:
        subscription_id, interval, rest = answer.split(" ", 2)
        return int(subscription_id), int(interval), _strings(rest)

    assert _compare(oracle.pairs("sub"), python, java) == len(CASES["sub"])


@pytest.mark.differential
def test_oracle_regex_dialect(oracle: Oracle) -> None:
    def python(payload: tuple[str, str]) -> str:
        pattern, subject = payload
        try:
            compiled = java_regex(pattern)
        except re.error:
            return "ERR"
        return "1" if compiled.fullmatch(subject) else "0"

    _compare(oracle.pairs("regex"), python, str)


@pytest.mark.differential
def test_oracle_config_parsing(oracle: Oracle) -> None:
    def interval(text: str) -> str:
        try:
            value = parse_client_metrics_config("s", {"interval.ms": text}).interval_ms
        except ClientMetricsConfigError as error:
            if error.error_code is ErrorCode.INVALID_CONFIG:
                return "NFE"
            return re.search(r"Invalid value (-?\d+)", error.message)[1]  # type: ignore[index]
        return str(value)

    _compare(oracle.pairs("int"), interval, str)
    _compare(
        oracle.pairs("list"),
        lambda text: list(parse_client_metrics_config("s", {"metrics": text}).metrics),
        _strings,
    )
    _compare(oracle.pairs("trim"), java_trim, _unhex)

    def entry(text: str) -> Any:
        try:
            return parse_client_metrics_config("s", {"match": text}).match
        except ClientMetricsConfigError:
            return "INVALID_CONFIG"

    def entry_from_split(answer: str) -> Any:
        parts = _strings(answer)
        if len(parts) != 2 or java_trim(parts[0]) not in SELECTOR_NAMES:
            return "INVALID_CONFIG"
        try:
            java_regex(java_trim(parts[1]))
        except re.error:
            return "INVALID_CONFIG"
        return {java_trim(parts[0]): java_trim(parts[1])}

    # LIST parsing trims the whole value first, so compare entries that trimming leaves alone
    plain = [
        (text, answer)
        for text, answer in oracle.pairs("split")
        if text and java_trim(text) == text and "," not in text
    ]
    _compare(plain, entry, entry_from_split)


@pytest.mark.differential
def test_oracle_host_address(oracle: Oracle) -> None:
    _compare(oracle.pairs("addr"), java_host_address, str)
