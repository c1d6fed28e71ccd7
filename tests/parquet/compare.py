"""Compares two `krphase export parquet` datasets with DuckDB: every table's schema, and every
row's every value, the datasets' own ids aside. A dataset exported from a database numbers
windows and dispatches across all runs (SQLite's ids); one made `--from` phase files numbers them
from 1 in each run: both are compared as their place in the run (`window_id` minus the run's
first window id, plus 1; the same for `passes.window_id`, `counters.window_id` and
`dispatches.id`). `runs.imported_at` (when each was made) is compared as present, not as equal.

Prints one JSON object: rows per table, and for each table the rows found in one dataset and not
in the other (both ways, as multisets: each row's hash counted on both sides), at most five of
each, so a failure shows the values.

Usage: python3 compare.py DATASET_A DATASET_B
"""

import json
import sys

import duckdb

TABLES = ["runs", "windows", "passes", "dispatches", "measurements", "counters"]


def read(root, name):
    return f"read_parquet('{root}/{name}/*/*.parquet', hive_partitioning = true)"


def normalized(con, root, name):
    """The table's rows with run-relative ids, as a query."""
    first = f"(SELECT run, min(window_id) AS lo FROM {read(root, 'windows')} GROUP BY run)"
    cols = [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM {read(root, name)}").fetchall()]
    if name == "runs":
        sel = [c for c in cols if c != "imported_at"] + ["imported_at IS NOT NULL AS imported"]
        return f"SELECT {', '.join(sel)} FROM {read(root, name)}"
    if name in ("windows", "passes", "counters"):
        sel = [f"t.window_id - f.lo + 1 AS window_id" if c == "window_id" else f"t.{c}" for c in cols]
        return f"SELECT {', '.join(sel)} FROM {read(root, name)} t LEFT JOIN {first} f USING (run)"
    if name == "dispatches":
        sel = [
            "t.id - min(t.id) OVER (PARTITION BY t.run) + 1 AS id" if c == "id" else f"t.{c}"
            for c in cols
        ]
        return f"SELECT {', '.join(sel)} FROM {read(root, name)} t"
    return f"SELECT * FROM {read(root, name)}"


def schema(con, root, name):
    return con.sql(f"DESCRIBE SELECT * FROM {read(root, name)}").fetchall()


def main():
    a, b = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    out = {"rows": {}, "schema_differs": [], "only_in_a": {}, "only_in_b": {}}
    for name in TABLES:
        if schema(con, a, name) != schema(con, b, name):
            out["schema_differs"].append(name)
            continue
        qa, qb = normalized(con, a, name), normalized(con, b, name)
        out["rows"][name] = [
            con.sql(f"SELECT count(*) FROM {read(root, name)}").fetchone()[0] for root in (a, b)
        ]
        # Rows as hashes counted on each side (memory stays small over millions of rows); the
        # rows themselves only when the counts differ.
        counted = lambda q: f"SELECT hash(x) AS h, count(*) AS n FROM ({q}) x GROUP BY h"  # noqa: E731
        differ = con.sql(
            f"SELECT count(*) FROM ({counted(qa)}) a FULL JOIN ({counted(qb)}) b USING (h) "
            "WHERE a.n IS DISTINCT FROM b.n"
        ).fetchone()[0]
        if not differ:
            continue
        for key, x, y in (("only_in_a", qa, qb), ("only_in_b", qb, qa)):
            rows = con.sql(f"SELECT * FROM (({x}) EXCEPT ALL ({y})) LIMIT 5").fetchall()
            if rows:
                out[key][name] = [[str(v) for v in r] for r in rows]
    print(json.dumps(out))


main()
