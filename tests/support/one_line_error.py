"""What every bad input must leave on standard error: one line, no traceback, naming what it
should (the tests of bad flags, values and files share it)."""

from __future__ import annotations

import pytest


def one_line(capsys: pytest.CaptureFixture[str], *texts: str) -> str:
    """The captured standard error, asserted to be one line holding each of `texts`."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for text in texts:
        assert text in err, err
    return err
