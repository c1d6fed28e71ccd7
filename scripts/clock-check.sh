#!/usr/bin/env bash
# The hot path's TSC clock against CLOCK_BOOTTIME over a long run: records a COMPLETE callback
# every 5 ms for SECONDS (default 600, ten minutes) with BOOTTIME read just before and after each,
# then checks that every stamp, converted from TSC ticks by the reader, lies between its two
# readings within 1 µs. Prints the test's summary line (clock, stamps, calibration pairs, offsets).
#
#   scripts/clock-check.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
KRPHASE_CLOCK_CHECK_SECS="$secs" cargo test --release -p krphase-tool --test clock_live -- \
    --nocapture 2>&1 | grep -E "^clock |test result|panicked|outside"
