#!/bin/sh
# A driver that never says anything, not even to --describe, and starts a helper that would
# outlive it (a JVM launcher's child, a wrapper's daemon): each helper's pid is appended to
# $KCONFORM_TEST_HELPER_PIDS, so a test can check that none survives the run.
sleep 600 &
echo $! >> "${KCONFORM_TEST_HELPER_PIDS:-/dev/null}"
wait
