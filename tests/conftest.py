"""The harness's own tests: what every one of them needs from the process they run in."""

from __future__ import annotations

import signal


def pytest_configure() -> None:
    """Tests press Ctrl-C on the kconform processes they start, so SIGINT must reach those: a
    shell without job control starts background commands with SIGINT ignored (`make test &` in a
    script), and every child would inherit that. Handled here, it is default again in children."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
