"""Reads a `krphase export parquet` dataset with DuckDB and prints, as one JSON object, what the
export test compares against the SQLite report: the schema DuckDB sees, per-run window and phase
figures computed over all runs in one query each, the result of every DuckDB query in the
Parquet documentation (so the documented queries run as written), and the result of every Spark
SQL query there, translated to DuckDB by sqlglot (so the Spark queries ask what the DuckDB ones
ask; `scripts/spark-sql` runs them in Spark itself).

Usage: python3 query.py DATASET_DIR DOC_MARKDOWN
"""

import json
import re
import sys

import duckdb
import sqlglot

TABLES = ["runs", "windows", "passes", "dispatches", "measurements", "counters"]

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
                quantile_cont({c}, 0.5), quantile_cont({c}, 0.9), quantile_cont({c}, 0.99)"""
        )
    rows = con.execute(
        f"""SELECT run, any_value(hostname), any_value(rank), count(*),
                   {", ".join(figures)}
            FROM windows WHERE outcome = 'replayed' GROUP BY run ORDER BY run"""
    ).fetchall()
    for row in rows:
        run = {"hostname": row[1], "rank": row[2], "replayed": row[3], "phases": {}}
        for i, name in enumerate(PHASES):
            n, positive, total, mx, mean, p50, p90, p99 = row[4 + 8 * i : 12 + 8 * i]
            run["phases"][name] = {
                "samples": n,
                "positive_ns": positive,
                "total_ns": total,
                "max_ns": mx,
                "mean_ns": mean,
                "p50_ns": p50,
                "p90_ns": p90,
                "p99_ns": p99,
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
    # Across the ranked runs, as the report's cross-rank summary defines it: the slowest rank
    # (most replay time; ties: the lowest rank) and the spread of replay time and mean window.
    ranks = con.execute(
        """WITH per_rank AS (
               SELECT rank, sum(greatest(window_ns, 0)) AS replay_ns, avg(window_ns) AS mean_ns
               FROM windows WHERE outcome = 'replayed' AND rank IS NOT NULL GROUP BY run, rank)
           SELECT count(*), min(replay_ns), quantile_cont(replay_ns, 0.5), max(replay_ns),
                  min(mean_ns), quantile_cont(mean_ns, 0.5), max(mean_ns),
                  (SELECT rank FROM per_rank ORDER BY replay_ns DESC, rank LIMIT 1)
           FROM per_rank"""
    ).fetchone()
    out["cross_rank"] = {
        "replay": {"n": ranks[0], "min": ranks[1], "median": ranks[2], "max": ranks[3]},
        "mean_window": {"n": ranks[0], "min": ranks[4], "median": ranks[5], "max": ranks[6]},
        "slowest": ranks[7],
    }
    # Every ```sql block of the documentation marked for DuckDB runs as written.
    text = open(doc, encoding="utf-8").read()
    for sql in re.findall(r"```sql duckdb\n(.*?)```", text, re.S):
        sql = sql.replace("'krphase-parquet/", f"'{root}/")
        result = con.execute(sql).fetchall()
        out["docs"].append({"sql": sql, "rows": [[str(v) for v in r] for r in result]})
    # Every ```sql spark query, but the tables' registration (the views above stand for it),
    # through sqlglot's Spark to DuckDB translation.
    out["sqlglot"] = sqlglot.__version__
    out["spark_docs"] = []
    for block in re.findall(r"```sql spark\n(.*?)```", text, re.S):
        if block.lstrip().upper().startswith("CREATE TEMPORARY VIEW"):
            continue
        (sql,) = sqlglot.transpile(block, read="spark", write="duckdb")
        result = con.execute(sql).fetchall()
        out["spark_docs"].append(
            {"spark": block, "duckdb": sql, "rows": [[str(v) for v in r] for r in result]}
        )
    print(json.dumps(out))


main()
