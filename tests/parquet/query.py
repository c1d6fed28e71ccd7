"""Reads a `krphase export parquet` dataset with DuckDB and prints, as one JSON object, what the
export test compares against the SQLite report: the schema DuckDB sees, per-run window and phase
figures computed over all runs in one query each, and the result of every DuckDB query in the
Parquet documentation (so the documented queries run as written).

Usage: python3 query.py DATASET_DIR DOC_MARKDOWN
"""

import json
import re
import sys

import duckdb

TABLES = ["runs", "windows", "passes", "dispatches", "measurements"]

# The phases' columns, by the report's phase names.
PHASES = {
    "config": "config_ns",
    "pre-pass": "prepass_ns",
    "drain": "drain_ns",
    "snapshot": "snapshot_ns",
    "pass exec": "pass_ns",
    "gpu": "gpu_ns",
    "continue": "continue_ns",
    "restore": "restore_ns",
    "restore bound": "restore_bound_ns",
    "tail": "tail_ns",
    "window": "window_ns",
}


def table(root, name):
    return f"read_parquet('{root}/{name}/*/*.parquet', hive_partitioning = true)"


def main():
    root, doc = sys.argv[1], sys.argv[2]
    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM {table(root, t)}")
    out = {"duckdb": duckdb.__version__, "schema": {}, "runs": {}, "docs": []}
    for t in TABLES:
        out["schema"][t] = [[r[0], r[1]] for r in con.execute(f"DESCRIBE {t}").fetchall()]
    # Per run, every phase over the replayed windows, in one pass over all runs (ranks).
    figures = []
    for name, c in PHASES.items():
        figures.append(
            f"""count({c}), sum(greatest({c}, 0)), sum({c}), max({c}), avg({c}),
                quantile_cont({c}, 0.5), quantile_cont({c}, 0.9)"""
        )
    rows = con.execute(
        f"""SELECT run, any_value(hostname), any_value(rank), count(*),
                   {", ".join(figures)}
            FROM windows WHERE outcome = 'replayed' GROUP BY run ORDER BY run"""
    ).fetchall()
    for row in rows:
        run = {"hostname": row[1], "rank": row[2], "replayed": row[3], "phases": {}}
        for i, name in enumerate(PHASES):
            n, positive, total, mx, mean, p50, p90 = row[4 + 7 * i : 11 + 7 * i]
            run["phases"][name] = {
                "samples": n,
                "positive_ns": positive,
                "total_ns": total,
                "max_ns": mx,
                "mean_ns": mean,
                "p50_ns": p50,
                "p90_ns": p90,
            }
        out["runs"][str(row[0])] = run
    declined = con.execute(
        "SELECT run, count(*) FROM windows WHERE outcome <> 'replayed' GROUP BY run"
    ).fetchall()
    for run, n in declined:
        out["runs"].setdefault(str(run), {"replayed": 0})["declined"] = n
    passes = con.execute("SELECT run, count(*), sum(gpu_ns) FROM passes GROUP BY run").fetchall()
    for run, n, gpu in passes:
        out["runs"].setdefault(str(run), {})["passes"] = [n, gpu]
    # Every ```sql block of the documentation marked for DuckDB runs as written.
    text = open(doc, encoding="utf-8").read()
    for sql in re.findall(r"```sql duckdb\n(.*?)```", text, re.S):
        sql = sql.replace("'krphase-parquet/", f"'{root}/")
        result = con.execute(sql).fetchall()
        out["docs"].append({"sql": sql, "rows": [[str(v) for v in r] for r in result]})
    print(json.dumps(out))


main()
