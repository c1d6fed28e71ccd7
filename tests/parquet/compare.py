"""Compares two `krphase export parquet` datasets with DuckDB: every table's schema, and every
row's every value, the datasets' own ids aside. A dataset exported from a database numbers
windows and dispatches across all runs (SQLite's ids); one made `--from` phase files numbers them
from 1 in each run: both are compared as their place in the run (`window_id` minus the run's
first window id, plus 1; the same for `passes.window_id`, `counters.window_id` and
`dispatches.id`). `runs.imported_at` (when each was made) is compared as present, not as equal.

Two modes, each printing one JSON object with the rows per table and the schemas that differ:

- rows (the default): for each table the rows found in one dataset and not in the other (both
  ways, as multisets: each row's hash counted on both sides), at most five of each, so a failure
  shows the values. DuckDB holds every distinct row hash of a table: many GB over millions of rows.
- `--checksum`: for each table and each run, the row count and order-independent sums (as
  HUGEINT) of the hash of every column's value and of every whole row, in one streaming
  aggregate per table and dataset under DuckDB's `memory_limit` (`--memory`, default 1GB):
  memory holds one entry per run, never the rows. Two datasets agree when every run's every sum
  does (a changed value changes its hash, and so the sums, but for a 2^-64 collision); `differs`
  names, for each table that does not, the runs and the columns whose sums differ, at most five
  of each, and how many runs.

Usage: python3 compare.py [--checksum [--memory SIZE]] DATASET_A DATASET_B
"""

import argparse
import json

import duckdb

TABLES = ["runs", "windows", "passes", "dispatches", "measurements", "counters"]


def read(root, name):
    return f"read_parquet('{root}/{name}/*/*.parquet', hive_partitioning = true)"


def normalized(con, root, name):
    """The table's rows with run-relative ids, as a query (streaming: the runs' first ids are
    joined from a grouped read, one row a run)."""
    cols = [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM {read(root, name)}").fetchall()]
    if name == "runs":
        sel = [c for c in cols if c != "imported_at"] + ["imported_at IS NOT NULL AS imported"]
        return f"SELECT {', '.join(sel)} FROM {read(root, name)}"
    ids = {"windows": ("windows", "window_id", "window_id"),
           "passes": ("windows", "window_id", "window_id"),
           "counters": ("windows", "window_id", "window_id"),
           "dispatches": ("dispatches", "id", "id")}
    if name in ids:
        src, key, col = ids[name]
        first = f"(SELECT run, min({key}) AS lo FROM {read(root, src)} GROUP BY run)"
        sel = [f"t.{c} - f.lo + 1 AS {c}" if c == col else f"t.{c}" for c in cols]
        return f"SELECT {', '.join(sel)} FROM {read(root, name)} t LEFT JOIN {first} f USING (run)"
    return f"SELECT * FROM {read(root, name)}"


def schema(con, root, name):
    return con.sql(f"DESCRIBE SELECT * FROM {read(root, name)}").fetchall()


def rows_mode(con, a, b, name, out):
    qa, qb = normalized(con, a, name), normalized(con, b, name)
    # Rows as hashes counted on each side; the rows themselves only when the counts differ.
    counted = lambda q: f"SELECT hash(x) AS h, count(*) AS n FROM ({q}) x GROUP BY h"  # noqa: E731
    differ = con.sql(
        f"SELECT count(*) FROM ({counted(qa)}) a FULL JOIN ({counted(qb)}) b USING (h) "
        "WHERE a.n IS DISTINCT FROM b.n"
    ).fetchone()[0]
    if not differ:
        return
    for key, x, y in (("only_in_a", qa, qb), ("only_in_b", qb, qa)):
        rows = con.sql(f"SELECT * FROM (({x}) EXCEPT ALL ({y})) LIMIT 5").fetchall()
        if rows:
            out[key][name] = [[str(v) for v in r] for r in rows]


def checksums(con, root, name):
    """Per run: the row count, the sum of each column's value hashes, the sum of the row hashes;
    and the columns' names."""
    q = normalized(con, root, name)
    cols = [r[0] for r in con.sql(f"DESCRIBE {q}").fetchall()]
    sums = ", ".join(f'sum(hash(x."{c}")::HUGEINT)' for c in cols)
    got = con.sql(
        f"SELECT x.run, count(*), sum(hash(x)::HUGEINT), {sums} FROM ({q}) x GROUP BY x.run"
    ).fetchall()
    return {r[0]: r[1:] for r in got}, ["rows", "row"] + cols


def checksum_mode(con, a, b, name, out):
    sa, cols = checksums(con, a, name)
    sb, _ = checksums(con, b, name)
    runs = sorted(set(sa) | set(sb), key=lambda r: (r is None, r))
    bad = [r for r in runs if sa.get(r) != sb.get(r)]
    if not bad:
        return
    columns = sorted({cols[i] for r in bad for i in range(len(cols))
                      if sa.get(r) is None or sb.get(r) is None or sa[r][i] != sb[r][i]})
    out["differs"][name] = {"runs": bad[:5], "runs_differing": len(bad), "columns": columns[:5]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--checksum", action="store_true")
    p.add_argument("--memory", default="1GB")
    p.add_argument("a")
    p.add_argument("b")
    args = p.parse_args()
    con = duckdb.connect()
    out = {"rows": {}, "schema_differs": []}
    if args.checksum:
        con.execute(f"SET memory_limit = '{args.memory}'")
        con.execute("SET preserve_insertion_order = false")
        out["differs"] = {}
    else:
        out.update(only_in_a={}, only_in_b={})
    for name in TABLES:
        if schema(con, args.a, name) != schema(con, args.b, name):
            out["schema_differs"].append(name)
            continue
        out["rows"][name] = [
            con.sql(f"SELECT count(*) FROM {read(root, name)}").fetchone()[0]
            for root in (args.a, args.b)
        ]
        (checksum_mode if args.checksum else rows_mode)(con, args.a, args.b, name, out)
    print(json.dumps(out))


main()
