#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, one after another, and prints per
# target: seconds run, executions, crashes. Not part of CI (see docs/fuzzing.md).
#
#   fuzz/run.sh SECONDS [TARGET...]
#
# Builds the targets with libFuzzer's coverage instrumentation on the stable toolchain (the
# sanitizer-coverage pass and its options are stable rustc flags; no nightly, no cargo-fuzz).
# Each target starts from its committed corpus (fuzz/corpus/<target>, never written to) and
# keeps what it finds in fuzz/work/<target>; crashing inputs land in fuzz/artifacts/<target>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
all_targets=(krp_file krp_records sdk_log harness_csv)

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: fuzz/run.sh SECONDS [TARGET...]   (targets: ${all_targets[*]})" >&2
    exit 2
fi
seconds="$1"
shift
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")

host="$(rustc -vV | sed -n 's/^host: //p')"
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
-Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation off build scripts and proc macros.
(cd "$here" && cargo build --release --target "$host" --bins)
bin="$here/target/$host/release"

# A target's memory is bounded well below the machine's, so an allocation driven by the input
# shows up as a finding (oom-*) rather than as a slow machine.
rss_mb="${KRPHASE_FUZZ_RSS_MB:-2048}"

results=()
status=0
for t in "${targets[@]}"; do
    [[ -x "$bin/$t" ]] || { echo "fuzz/run.sh: no target $t" >&2; exit 2; }
    work="$here/work/$t"
    arts="$here/artifacts/$t"
    mkdir -p "$work" "$arts"
    before=$(find "$arts" -type f | wc -l)
    log="$here/work/$t.log"
    start=$(date +%s)
    set +e
    "$bin/$t" -max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$arts/" "$work" "$here/corpus/$t" >"$log" 2>&1
    rc=$?
    set -e
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    crashes=$(($(find "$arts" -type f | wc -l) - before))
    if [[ $rc -ne 0 && $crashes -eq 0 ]]; then
        crashes="? (exit $rc, see $log)"
    fi
    [[ $rc -ne 0 ]] && status=1
    results+=("$(printf '%-12s %8ss %14s %s' "$t" "$took" "${execs:-?}" "$crashes")")
done

printf '%-12s %9s %14s %s\n' target time executions crashes
printf '%s\n' "${results[@]}"
exit $status
