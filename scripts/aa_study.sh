#!/usr/bin/env bash
# A/A study of `krphase compare`: does the verdict stay quiet when nothing changed, and does it
# see a change that is there?
#
# Each comparison takes fresh drive-mode runs of the emulated STREAM (krphase-emu with the real
# libkrphase.so), RUNS a side, interleaved in rotating order: label A and label B are the same
# build (the A/A pair), label C halves the emulated host link (`--link-gbps`), which slows the
# snapshot copies in the pre-pass and the restore copies between passes. Then `krphase compare
# A B` and `krphase compare A C`. The table gives, per phase, the share of A/A comparisons that
# said "moved" (either form; the goal is at most 5 %) and the share of A/C comparisons that said
# "moved" where the link paces the work (the goal is at least 95 %).
#
# Usage: scripts/aa_study.sh [COMPARISONS] [RUNS]       (defaults 20 and 3)
# Env:   AA_BUSY=0        no busy loops (default: two `yes >/dev/null` run beside the study)
#        AA_OUT=DIR       keep the runs and databases in DIR (default: a temporary directory)
#        AA_ITERATIONS=N  STREAM iterations a run (5 windows each; default 40)
#        AA_ELEMENTS=N    STREAM elements (default 32768)
#        AA_NO_BUILD=1    use the release binaries as built
#        AA_LINK_GBPS=G   the emulated host link of A and B (default 1; C gets half)
set -euo pipefail

COMPARISONS=${1:-20}
RUNS=${2:-3}
ITERATIONS=${AA_ITERATIONS:-40}
ELEMENTS=${AA_ELEMENTS:-32768}
# A link slower than this machine's memcpy even when loaded (about 2 GB/s on a shared 2-core
# machine), so the pacing, not the CPU, sets each copy's time and halving it is a real change.
LINK_GBPS=${AA_LINK_GBPS:-1}
HALF_GBPS=$(python3 -c "print($LINK_GBPS / 2)")

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${AA_NO_BUILD:-0}" = 0 ]; then
    cargo build --release --quiet --manifest-path "$root/Cargo.toml" \
        -p krphase-tool -p krphase-emu -p krphase-analyzer
fi
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/release
krphase=$target/krphase
emu=$target/krphase-emu
tool=$target/libkrphase.so

out=${AA_OUT:-$(mktemp -d)}
mkdir -p "$out"
busy=()
cleanup() {
    for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -z "${AA_OUT:-}" ]; then rm -rf "$out"; fi
}
trap cleanup EXIT
if [ "${AA_BUSY:-1}" != 0 ]; then
    yes >/dev/null & busy+=($!)
    yes >/dev/null & busy+=($!)
fi

# One drive-mode run of label $2 at link $3 GB/s into database $1.
run() {
    local db=$1 label=$2 gbps=$3 n=$4
    local krp="$out/$(basename "$db" .db)-$label-$n.krp"
    ROCP_TOOL_LIBRARIES=$tool KRPHASE_MODE=drive KRPHASE_PASSES=2 KRPHASE_OUTPUT=$krp \
        "$emu" run stream --elements "$ELEMENTS" --iterations "$ITERATIONS" \
        --link-gbps "$gbps" >/dev/null 2>&1
    "$krphase" --db "$db" import "$krp" --label "$label" >/dev/null
    rm -f "$krp"
}

echo "A/A study: $COMPARISONS comparisons of $RUNS runs a side, STREAM $ELEMENTS elements x" \
     "$ITERATIONS iterations, 2 passes; busy loops: ${#busy[@]}; $(uptime)"
for c in $(seq 1 "$COMPARISONS"); do
    db="$out/cmp-$c.db"
    rm -f "$db"
    for r in $(seq 1 "$RUNS"); do
        # Rotate the order each round, so no label always runs first.
        case $(( (c + r) % 3 )) in
            0) order="A B C" ;;
            1) order="B C A" ;;
            *) order="C A B" ;;
        esac
        for label in $order; do
            gbps=$LINK_GBPS
            [ "$label" = C ] && gbps=$HALF_GBPS
            run "$db" "$label" "$gbps" "$r"
        done
    done
    "$krphase" --db "$db" compare A B --format json >"$out/aa-$c.json"
    "$krphase" --db "$db" compare A C --format json >"$out/ac-$c.json"
done
echo "load at the end: $(uptime)"

python3 - "$out" "$COMPARISONS" <<'PY'
import json, sys, collections
out, n = sys.argv[1], int(sys.argv[2])
# The phase that is nothing but link-paced copies (the pre-pass holds the drain as well).
paced = {"restore"}
aa, ac = collections.Counter(), collections.Counter()
seen = collections.Counter()
verdicts = collections.defaultdict(collections.Counter)
for c in range(1, n + 1):
    for kind, tally in (("aa", aa), ("ac", ac)):
        rows = json.load(open(f"{out}/{kind}-{c}.json"))["runs"]["phases"]
        for p in rows:
            if p["a_runs"] == 0 and p["b_runs"] == 0:
                continue
            if kind == "aa":
                seen[p["phase"]] += 1
                verdicts[p["phase"]][p["verdict_code"]] += 1
            if p["verdict_code"] in ("moved", "moved_within"):
                tally[p["phase"]] += 1
print(f"{'phase':<24} {'A/A moved':>10} {'share':>7}   {'A/C moved':>10} {'share':>7}   goal")
for ph in seen:
    goal = "<= 5% A/A; >= 95% A/C (link-paced)" if ph in paced else "<= 5% A/A"
    print(f"{ph:<24} {aa[ph]:>6}/{n:<3} {aa[ph] / n:>7.0%}   {ac[ph]:>6}/{n:<3} {ac[ph] / n:>7.0%}   {goal}")
print("A/A verdicts per phase:", {k: dict(v) for k, v in verdicts.items()})
PY
