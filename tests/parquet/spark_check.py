"""Runs the Parquet documentation's Spark SQL in Spark itself (local mode) over a dataset and
checks each answer against the DuckDB query beside it in the documentation. Prints one line per
query (rows, Spark's and DuckDB's time) and exits 1 when an answer differs.

Usage: python3 spark_check.py DATASET_DIR DOC_MARKDOWN
"""

import math
import re
import sys
import time

import duckdb
from pyspark.sql import SparkSession


def cells(row):
    out = []
    for v in row:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(v)
    return out


def same(a, b):
    if len(a) != len(b):
        return False
    key = lambda r: [str(c) for c in r]  # noqa: E731
    for x, y in zip(sorted(a, key=key), sorted(b, key=key)):
        for u, v in zip(x, y):
            if isinstance(u, float) and isinstance(v, float):
                if not math.isclose(u, v, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif u != v:
                return False
    return True


def main():
    root, doc = sys.argv[1], sys.argv[2]
    text = open(doc, encoding="utf-8").read()
    spark_blocks = re.findall(r"```sql spark\n(.*?)```", text, re.S)
    duck_blocks = re.findall(r"```sql duckdb\n(.*?)```", text, re.S)
    spark = (
        SparkSession.builder.master("local[*]")
        .appName("krphase-docs")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(f"Spark {spark.version}, DuckDB {duckdb.__version__}")
    queries = []
    for block in spark_blocks:
        for stmt in filter(None, (s.strip() for s in block.split(";"))):
            if stmt.upper().startswith("CREATE TEMPORARY VIEW"):
                spark.sql(stmt.replace("'krphase-parquet/", f"'{root}/"))
            else:
                queries.append(stmt)
    con = duckdb.connect()
    failed = 0
    for i, (sq, dq) in enumerate(zip(queries, duck_blocks)):
        t = time.perf_counter()
        s_rows = [cells(r) for r in spark.sql(sq).collect()]
        ts = time.perf_counter() - t
        t = time.perf_counter()
        d_rows = [cells(r) for r in con.execute(dq.replace("'krphase-parquet/", f"'{root}/")).fetchall()]
        td = time.perf_counter() - t
        ok = same(s_rows, d_rows)
        failed += not ok
        first = sq.splitlines()[0][:60]
        print(f"query {i + 1}: {len(s_rows)} rows, Spark {ts:.2f} s, DuckDB {td:.3f} s, "
              f"{'same answer' if ok else 'DIFFERENT'}  ({first} ...)")
        if not ok:
            print(f"  Spark:  {s_rows}\n  DuckDB: {d_rows}")
    if len(queries) != len(duck_blocks):
        print(f"{len(queries)} Spark queries but {len(duck_blocks)} DuckDB queries")
        failed += 1
    spark.stop()
    sys.exit(1 if failed else 0)


main()
