#!/usr/bin/env bash
# The performance table: runs the tool's benches RUNS times (default 3) and prints, for each
# row (figure, reference measured in the same run, goal, met?), every run's table with the load
# at the time, then one line per row with the first number of its figure in each run and their
# median. The analyzer's benches (import against a bare rusqlite program, report, compare) are
# run once each when they exist, and what they print is passed through.
#
# Usage: scripts/bench_table.sh [RUNS]
#   KRPHASE_BENCH_NO_CALLGRIND=1   skip the callgrind rows (valgrind is slow)
#   KRPHASE_BENCH_SKIP_ANALYZER=1  skip the analyzer's benches
# Needs strace for the hand-over's system-call rows (apt-get install strace) and valgrind for
# the instruction counts (apt-get install valgrind); without them those rows say so.
set -euo pipefail
runs=${1:-3}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for bench in hot_path handover window_overhead; do
    cargo bench -q -p krphase-tool --bench "$bench" --no-run >/dev/null 2>&1 || {
        echo "cargo bench --bench $bench does not build" >&2
        exit 1
    }
done

for r in $(seq 1 "$runs"); do
    for bench in hot_path handover window_overhead; do
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        echo "## $bench, run $r of $runs (load average before: $load)"
        cargo bench -q -p krphase-tool --bench "$bench" 2>/dev/null | grep '^|' | tee "$out/$bench.$r"
        echo
    done
done

echo "## medians over $runs runs (first number of each row's figure)"
echo "| measurement | per run | median |"
echo "|---|---|---|"
for bench in hot_path handover window_overhead; do
    cat "$out/$bench".* |
        awk -F'|' 'NF > 3 && $2 !~ /measurement|---/ {
            key = $2; gsub(/^ +| +$/, "", key)
            if (match($3, /[-+]?[0-9]+(\.[0-9]+)?/)) {
                v = substr($3, RSTART, RLENGTH)
                if (!(key in vals)) order[++n] = key
                vals[key] = vals[key] " " v
            }
        }
        END {
            for (i = 1; i <= n; i++) {
                k = order[i]; m = split(substr(vals[k], 2), a, " ")
                for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
                med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
                printf "| %s | %s | %s |\n", k, substr(vals[k], 2), med
            }
        }'
done

if [ -z "${KRPHASE_BENCH_SKIP_ANALYZER:-}" ]; then
    for bench in import report compare; do
        if [ -f "analyzer/benches/$bench.rs" ]; then
            echo
            echo "## analyzer: $bench (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
            cargo bench -q -p krphase-analyzer --bench "$bench" 2>/dev/null | grep -v '^\s*$' || echo "(cargo bench -p krphase-analyzer --bench $bench failed)"
        fi
    done
fi
