#!/usr/bin/env bash
# The emulated per-phase replay cost of one STREAM triad dispatch per SDK build, for the peer
# table in docs/peer-table.md. Drive mode (krphase owns replay, so every phase is measured in
# process), KRPHASE_PASSES passes, only `stream_triad` replayed (as `ncu -k triad` profiles
# only triad), a 24 MiB footprint (three arrays of 1 Mi doubles), the SDK log at INFO joined
# for the snapshot's own time. The emulated device runs slower than a GPU by one factor,
# 2074 GB/s (the device-local copy rate of the cost model) over the memcpy rate that stands for
# it; that rate is fixed here (PEER_DEVICE_GBPS, default 20) so every build is paced alike, and
# the figures are divided by the factor back to GPU scale. Prints one markdown row per build:
# the median over runs of each run's median per window, in ms at GPU scale.
#
# Usage: scripts/peer_table.sh [RUNS] [PASSES]       (defaults 3 and 10)
# Env:   PEER_NO_BUILD=1   use the release binaries as built
#        PEER_OUT=DIR      keep the runs and the database in DIR
#        PEER_DEVICE_GBPS=G  the memcpy rate standing for device-local copies (default 20)
set -euo pipefail
RUNS=${1:-3}
PASSES=${2:-10}
ELEMENTS=1048576
DEVICE_GBPS=${PEER_DEVICE_GBPS:-20}
BUILDS=(baseline signal-pool skip-cu-markers keep-staging device-side
    signal-pool,skip-cu-markers,keep-staging,device-side)

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PEER_NO_BUILD:-0}" = 0 ]; then
    cargo build --release --quiet --manifest-path "$root/Cargo.toml" \
        -p krphase-tool -p krphase-emu -p krphase-analyzer
fi
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release
out=${PEER_OUT:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${PEER_OUT:-}" ] || trap 'rm -rf "$out"' EXIT
db=$out/peer.db
rm -f "$db"

# Builds interleaved run by run, so the machine's drift falls on all of them.
for r in $(seq 1 "$RUNS"); do
    for b in "${BUILDS[@]}"; do
        stem="$out/${b//,/_}-$r"
        ROCP_TOOL_LIBRARIES=$target/libkrphase.so KRPHASE_MODE=drive KRPHASE_PASSES=$PASSES \
            KRPHASE_KERNEL_FILTER='^stream_triad$' KRPHASE_OUTPUT=$stem.krp \
            ROCPROFILER_LOG_LEVEL=info KRPHASE_EMU_SDK_BUILD=$b KRPHASE_EMU_DEVICE_GBPS=$DEVICE_GBPS \
            "$target/krphase-emu" run stream --elements "$ELEMENTS" --iterations 3 \
            >/dev/null 2>"$stem.log"
        id=$("$target/krphase" --db "$db" import "$stem.krp" --label "$b" |
            sed -n 's/.*run \([0-9]*\).*/\1/p' | head -1)
        "$target/krphase" --db "$db" import-log "$stem.log" --run "$id" >/dev/null
    done
done

echo "STREAM triad, 24 MiB, $PASSES passes, $RUNS runs a build of 3 windows, drive mode," \
    "device $DEVICE_GBPS GB/s (figures x $DEVICE_GBPS/2074 to GPU scale); $(uptime)"
echo "| build | window | pre-pass | snapshot | pass exec | gpu | restore | window / pass |"
echo "|---|---|---|---|---|---|---|---|"
for b in "${BUILDS[@]}"; do
    "$target/krphase" --db "$db" report --label "$b" --format json >"$out/report.json"
    python3 - "$out/report.json" "$b" "$PASSES" "$DEVICE_GBPS" <<'PY'
import json, statistics, sys
runs = json.load(open(sys.argv[1]))["runs"]
build, passes, scale = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) / 2074.0
def med(name):
    v = [p["p50_ns"] for r in runs for p in r["phases"] if p["phase"] == name and p["samples"]]
    return statistics.median(v) / 1e6 * scale if v else float("nan")
cells = [med(p) for p in ("window", "pre-pass", "snapshot", "pass exec", "gpu", "restore")]
per_pass = cells[0] / passes
name = "all four" if build.count(",") == 3 else build
print(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {per_pass:.3f} |")
PY
done
