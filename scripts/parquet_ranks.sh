#!/usr/bin/env bash
# The cross-rank Parquet benchmark: a job of RANKS synthetic ranks (WINDOWS replay windows each,
# one phase file a rank, written by `krphase gen-synthetic --ranks`) turned into one Parquet
# dataset straight from the phase files (`krphase export parquet --from`) with 1 and with 2
# workers, against the SQLite path in the same rounds (`import --jobs 2`, then `export parquet`).
# Prints, as medians of ROUNDS rounds that alternate the three builds, a table of each figure
# beside its goal and its reference: the build times, the dataset's size against the database's,
# the time of each DuckDB query of docs/parquet.md over the dataset, whether the two datasets hold
# the same values (`tests/parquet/compare.py --checksum`: per-run sums of value hashes, streamed
# under a DuckDB memory limit; its time and peak RSS beside) and whether DuckDB's answers are the
# SQLite report's (`report --by rank`: the slowest rank, the spread of the mean window). SPARK=1
# then runs the same queries in Spark (scripts/spark-sql) over the dataset.
#
# Usage: scripts/parquet_ranks.sh [RANKS [WINDOWS]]      (default: 10000 ranks, 100 windows)
# Environment: ROUNDS (default 3); KRPHASE, the krphase binary (default: the release build,
# built when missing); SPARK=1; COMPARE_MEMORY, DuckDB's memory limit for the comparison
# (default 1GB).
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
ranks="${1:-10000}"
windows="${2:-100}"
rounds="${ROUNDS:-3}"
target="${CARGO_TARGET_DIR:-$top/target}"
krphase="${KRPHASE:-$target/release/krphase}"
if [ -z "${KRPHASE:-}" ]; then
    cargo build --quiet --release -p krphase-analyzer --bin krphase --manifest-path "$top/Cargo.toml"
fi
pydeps="${KRPHASE_PYDEPS:-$target/pydeps}"
if ! PYTHONPATH="$pydeps" python3 -c 'import duckdb' 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target "$pydeps" -r "$top/tests/python-requirements.txt"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/krphase-ranks.XXXXXX")"
trap 'rm -rf "$work"' EXIT
PYTHONPATH="$pydeps" python3 - "$krphase" "$work" "$ranks" "$windows" "$rounds" "$top" <<'PY'
import json, os, re, subprocess, sys, time
import duckdb

krphase, work, ranks, windows, rounds, top = sys.argv[1:]
ranks, windows, rounds = int(ranks), int(windows), int(rounds)
load = lambda: open("/proc/loadavg").read().split()[:3]  # noqa: E731
load_start = load()

def run(*args):
    t = time.perf_counter()
    subprocess.run([krphase, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t

def median(v):
    return sorted(v)[len(v) // 2]

def size(p):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)

files = os.path.join(work, "ranks")
gen = run("gen-synthetic", "--windows", str(windows), "--ranks", str(ranks), "-o", files)
print(f"phase files written in {gen:.1f} s; load average {' '.join(load())}", flush=True)
builds = {"from1": [], "from2": [], "sqlite": [], "sqlite_import": []}
db = os.path.join(work, "k.db")
for r in range(rounds):
    order = ["from1", "from2", "sqlite"] if r % 2 == 0 else ["sqlite", "from2", "from1"]
    for b in order:
        if b == "sqlite":
            if os.path.exists(db):
                os.remove(db)
            ti = run("--db", db, "import", "--jobs", "2", files)
            te = run("--db", db, "export", "parquet", "-d", os.path.join(work, "via-db"))
            builds["sqlite_import"].append(ti)
            builds["sqlite"].append(ti + te)
            print(f"round {r + 1}: SQLite path {ti + te:.2f} s (import {ti:.2f} s)", flush=True)
        else:
            jobs = b[-1]
            builds[b].append(run("export", "parquet", "--from", files, "--jobs", jobs,
                                 "-d", os.path.join(work, "direct")))
            print(f"round {r + 1}: --from, {jobs} worker(s) {builds[b][-1]:.2f} s", flush=True)
ds = os.path.join(work, "direct")
# The comparison of the last rounds' datasets, in bounded memory; its peak RSS from time -v.
limit = os.environ.get("COMPARE_MEMORY", "1GB")
t = time.perf_counter()
cmp = subprocess.run(
    ["/usr/bin/time", "-v", sys.executable, os.path.join(top, "tests/parquet/compare.py"),
     "--checksum", "--memory", limit, os.path.join(work, "via-db"), ds],
    check=True, capture_output=True, text=True)
cmp_s = time.perf_counter() - t
same = json.loads(cmp.stdout)
cmp_rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", cmp.stderr).group(1))
equal = not same["schema_differs"] and not same["differs"] and all(
    a == b for a, b in same["rows"].values())
print(f"checksum comparison: {cmp_s:.1f} s, peak RSS {cmp_rss / 1024:.0f} MiB; "
      f"load average {' '.join(load())}", flush=True)

doc = open(os.path.join(top, "docs/parquet.md"), encoding="utf-8").read()
queries = re.findall(r"```sql duckdb\n(.*?)```", doc, re.S)
con = duckdb.connect()
qtimes, answers = [], []
for q in queries:
    q = q.replace("'krphase-parquet/", f"'{ds}/")
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        rows = con.execute(q).fetchall()
        ts.append(time.perf_counter() - t)
    qtimes.append(median(ts))
    answers.append(rows)
rep = json.loads(subprocess.run([krphase, "--db", db, "report", "--by", "rank", "--format", "json"],
                                check=True, capture_output=True, text=True).stdout)["ranks"]
slowest = next(x for x in rep["ranks"] if x["rank"] == rep["slowest"])
top_rank = answers[0][0]  # run, hostname, rank, windows, mean, max, replay_ns
spread = answers[1][0]    # ranks, fastest, median, slowest mean, ratio, cv
report_agrees = (top_rank[2] == rep["slowest"] and top_rank[6] == slowest["replay_ns"]
                 and spread[0] == rep["mean_window"]["n"]
                 and abs(spread[1] - rep["mean_window"]["min"]) <= 0.5
                 and abs(spread[2] - rep["mean_window"]["median"]) <= 0.5
                 and abs(spread[3] - rep["mean_window"]["max"]) <= 0.5)

def met(ok):
    return "met" if ok else "NOT met"

f1, f2, sq = median(builds["from1"]), median(builds["from2"]), median(builds["sqlite"])
dsz, dbsz = size(ds), os.path.getsize(db)
print(f"{ranks} ranks x {windows} windows ({ranks * windows} windows); medians of {rounds} rounds, "
      f"the three builds alternating; {os.cpu_count()} cores; "
      f"load average {' '.join(load_start)} at start, {' '.join(load())} at end")
print(f"phase files written in {gen:.1f} s ({size(files) / 1e6:.0f} MB)")
print(f"{'figure':<44} {'value':>12}  {'goal':<30} reference (same rounds)")
print(f"{'--from, 1 worker':<44} {f1:>10.2f} s  {'< the SQLite path: ' + met(f1 < sq):<30} "
      f"SQLite path {sq:.2f} s (import {median(builds['sqlite_import']):.2f} s + export)")
print(f"{'--from, 2 workers':<44} {f2:>10.2f} s  {'<= 0.6x 1 worker (ours): ' + met(f2 <= 0.6 * f1):<30} "
      f"{f1 / f2:.2f}x the 1-worker speed")
print(f"{'dataset size':<44} {dsz / 1e6:>9.1f} MB  {'< the database: ' + met(dsz < dbsz):<30} "
      f"SQLite database {dbsz / 1e6:.1f} MB")
for i, t in enumerate(qtimes):
    print(f"{f'DuckDB, docs query {i + 1} ({len(answers[i])} rows)':<44} {t:>10.3f} s  "
          f"{'<= 1 s (ours): ' + met(t <= 1.0):<30}")
rows = ", ".join(f"{t} {v[0]}" for t, v in same["rows"].items())
print(f"{'--from values = SQLite path values':<44} {str(equal):>12}  {'True':<30} "
      f"per-run checksums, {cmp_s:.1f} s, peak RSS {cmp_rss / 1024:.0f} MiB "
      f"(DuckDB limit {limit}); rows: {rows}")
if not equal:
    print(f"differs: {json.dumps(same.get('differs'))}; schemas: {same['schema_differs']}")
print(f"{'DuckDB answers = report --by rank':<44} {str(report_agrees):>12}  {'True':<30} "
      f"slowest rank {rep['slowest']} ({slowest['replay_ns']} ns); DuckDB: rank {top_rank[2]} "
      f"({top_rank[6]} ns); mean window min/median/max {spread[1]:.0f}/{spread[2]:.0f}/{spread[3]:.0f}")
sys.exit(0 if equal and report_agrees else 1)
PY
if [ "${SPARK:-}" = 1 ]; then
    # The dataset of the last --from round, still in the work directory.
    "$top/scripts/spark-sql" "$work/direct"
fi
