"""A Spark whose JVM is gone (SIGTERM to the process group reaches it too) is stopped without a
traceback, so an interrupted run still writes its summary and report (issue 41)."""

from __future__ import annotations

from typing import Any

import pytest

from kconform.fixtures.spark import LazySpark, stop_session


class _GoneJvm:
    """What py4j does on `stop()` once the JVM died: the gateway's socket is refused."""

    stopped = 0

    def stop(self) -> None:
        self.stopped += 1
        raise ConnectionRefusedError(111, "Connection refused")


def test_a_session_whose_jvm_is_gone_stops_with_a_note() -> None:
    session: Any = _GoneJvm()
    note = stop_session(session)
    assert session.stopped == 1 and note is not None
    assert "JVM already gone" in note and "ConnectionRefusedError" in note


def test_the_shared_session_forgets_a_gone_jvm() -> None:
    lazy = LazySpark()
    gone: Any = _GoneJvm()
    lazy._spark = gone  # started, then its JVM killed with the run's process group
    assert "JVM already gone" in (lazy.stop() or "")
    assert lazy.stop() is None  # idempotent: nothing left to stop


def test_py4js_interrupt_traceback_is_not_printed(caplog: pytest.LogCaptureFixture) -> None:
    """SIGTERM while py4j waits for the JVM: py4j logs "KeyboardInterrupt while sending command."
    with a traceback on the root logger (seen with `kconform volumes`); the run says it was
    interrupted itself. Other root records still pass."""
    import logging

    from kconform.fixtures.spark import PY4J_INTERRUPT, _quiet_interrupts

    _quiet_interrupts()
    _quiet_interrupts()  # once per process, however often a session starts
    with caplog.at_level(logging.ERROR):
        try:
            raise KeyboardInterrupt("signal 15")
        except KeyboardInterrupt:
            logging.exception(PY4J_INTERRUPT)
        logging.error("something else")
    assert [r.getMessage() for r in caplog.records] == ["something else"]
