//! End-to-end: the kernel names of every output equal binutils' `c++filt` output for the SDK's
//! name with `(\.kd)$` stripped first, as rocprofv3 shows them. One run of the names workload
//! (namespaced, templated, overloaded and `extern "C"` kernels) under the emulator's rocprofv3
//! stand-in with libkrphase.so observing, into rocpd; then `krphase report`, `export perfetto`
//! (`.pftrace` and JSON), `export rocpd` and `export parquet`, and `--mangled-kernels` /
//! `--truncate-kernels`.

use krphase_tests::filters::cxxfilt;
use krphase_tests::{artifacts, krphase_db_ok, output_text, scratch_dir};
use rusqlite::Connection;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK's names of names.hip's six kernels (their code objects' descriptor symbols).
fn symbols() -> Vec<&'static str> {
    krphase_kernels::KERNEL_SYMBOLS
        .iter()
        .filter(|(source, _)| *source == "names")
        .map(|(_, s)| *s)
        .collect()
}

/// The stand-in's run: its rocpd database and the tool's phase file.
fn run(dir: &Path) -> (PathBuf, PathBuf) {
    let a = artifacts();
    let mut cmd = Command::new(&a.emu);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let o = cmd
        .current_dir(dir)
        .arg("rocprofv3")
        .args(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"])
        .args(["--pmc", "SQ_WAVES", "--pmc", "SQ_INSTS_VALU"])
        .args(["-d", "out", "-o", "run", "--output-format", "rocpd", "--"])
        .arg(&a.emu)
        .args(["run", "names", "--elements", "256", "--iterations", "2"])
        .env("PATH", krphase_tests::path_with_artifacts())
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_MODE", "observe")
        .env_remove("KRPHASE_OUTPUT")
        .output()
        .expect("run krphase-emu rocprofv3");
    assert!(o.status.success(), "{}", output_text(&o));
    let out = dir.join("out");
    let krp = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "krp"))
        .expect("the tool's phase file");
    (out.join("run_results.db"), krp)
}

fn column(db: &Path, sql: &str) -> BTreeSet<String> {
    let c = Connection::open(db).unwrap();
    let mut st = c.prepare(sql).unwrap();
    st.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The distinct (kernel, kernel_symbol) pairs of the Parquet dataset's windows table, read
/// with DuckDB.
fn parquet_kernels(dataset: &Path) -> BTreeSet<(String, String)> {
    let script = "import duckdb, json, sys\n\
        rows = duckdb.sql(\"SELECT DISTINCT kernel, kernel_symbol FROM read_parquet('\" + sys.argv[1] + \
        \"/windows/*/*.parquet', hive_partitioning = true)\").fetchall()\n\
        print(json.dumps(rows))";
    let o = Command::new("python3")
        .env("PYTHONPATH", krphase_tests::python::ensure())
        .args(["-c", script])
        .arg(dataset)
        .output()
        .expect("run python3");
    assert!(o.status.success(), "{}", output_text(&o));
    let v: Vec<(String, String)> = serde_json::from_slice(&o.stdout).unwrap();
    v.into_iter().collect()
}

#[test]
fn every_output_names_kernels_as_cxxfilt_after_stripping_kd() {
    let dir = scratch_dir("kernel-name-outputs");
    let (rocpd, krp) = run(&dir);
    let db = dir.join("k.db");
    krphase_db_ok(&db, &["import".as_ref(), krp.as_os_str()]);
    let syms = symbols();
    let want: BTreeSet<String> = cxxfilt(&syms).into_iter().collect();
    assert_eq!(want.len(), 6);
    assert!(want.contains("krp::saxpy(unsigned long long*, unsigned long)"));
    assert!(want.contains("names_plain"));

    // rocprofv3's own rocpd: display_name is the formatted name, kernel_name the raw one.
    let display = column(&rocpd, "SELECT display_name FROM rocpd_info_kernel_symbol");
    assert!(want.is_subset(&display), "{display:?}");

    // The report: every name, no raw one.
    let report = krphase_db_ok(&db, &["report", "--format", "csv"]);
    for n in &want {
        assert!(
            report.contains(n.as_str()),
            "{n} missing from the report:\n{report}"
        );
    }
    assert!(
        !report.contains(".kd") && !report.contains("_Z"),
        "{report}"
    );
    // The Markdown report (tables unwrapped): its kernel tables hold every name whole.
    let markdown = krphase_db_ok(&db, &["report", "--format", "markdown"]);
    for n in &want {
        assert!(
            markdown.contains(n.as_str()),
            "{n} missing from the Markdown report"
        );
    }
    assert!(!markdown.contains(".kd") && !markdown.contains("_Z"));

    // The Perfetto trace, protobuf and JSON.
    let pftrace = dir.join("trace.pftrace");
    krphase_db_ok(
        &db,
        &[
            "export".as_ref(),
            "perfetto".as_ref(),
            "-o".as_ref(),
            pftrace.as_os_str(),
        ],
    );
    // Decoded by Perfetto's own protobuf modules (tests/pftrace/decode.py), every string in it.
    let o = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("pftrace/decode.py"))
        .arg(&pftrace)
        .env("PYTHONPATH", krphase_tests::python::ensure())
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", output_text(&o));
    let decoded = String::from_utf8(o.stdout).unwrap();
    for n in &want {
        assert!(
            decoded.contains(n.as_str()),
            "{n} missing from the .pftrace"
        );
    }
    for s in &syms {
        assert!(!decoded.contains(s), "raw {s} in the .pftrace");
    }
    let json = dir.join("trace.json");
    krphase_db_ok(
        &db,
        &[
            "export".as_ref(),
            "perfetto".as_ref(),
            "-o".as_ref(),
            json.as_os_str(),
        ],
    );
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let slice_names: BTreeSet<String> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "window")
        .filter_map(|e| {
            e["name"]
                .as_str()?
                .strip_prefix("window ")
                .map(str::to_string)
        })
        .collect();
    assert_eq!(slice_names, want, "the JSON trace's window slices");

    // krphase's tables in the rocpd database.
    krphase_db_ok(&db, &["import-rocpd".as_ref(), rocpd.as_os_str()]);
    krphase_db_ok(
        &db,
        &[
            "export".as_ref(),
            "rocpd".as_ref(),
            "-o".as_ref(),
            rocpd.as_os_str(),
        ],
    );
    let c = Connection::open(&rocpd).unwrap();
    let table: String = c
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'krphase_replay_window_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let exported = column(
        &rocpd,
        &format!("SELECT DISTINCT kernel_name FROM \"{table}\""),
    );
    assert_eq!(exported, want, "export rocpd's kernel_name");

    // Parquet: `kernel` shown, `kernel_symbol` as the SDK reported it.
    let dataset = dir.join("parquet");
    krphase_db_ok(
        &db,
        &[
            "export".as_ref(),
            "parquet".as_ref(),
            "-d".as_ref(),
            dataset.as_os_str(),
        ],
    );
    let pairs = parquet_kernels(&dataset);
    let expected_pairs: BTreeSet<(String, String)> = cxxfilt(&syms)
        .into_iter()
        .zip(syms.iter().map(|s| s.to_string()))
        .collect();
    assert_eq!(pairs, expected_pairs);

    // --mangled-kernels shows the SDK's names; --truncate-kernels the bare function names.
    let mangled = krphase_db_ok(&db, &["report", "--format", "csv", "--mangled-kernels"]);
    for s in &syms {
        assert!(mangled.contains(s), "{s} missing:\n{mangled}");
    }
    let truncated = dir.join("truncated");
    krphase_db_ok(
        &db,
        &[
            "export".as_ref(),
            "parquet".as_ref(),
            "--truncate-kernels".as_ref(),
            "-d".as_ref(),
            truncated.as_os_str(),
        ],
    );
    let shown: BTreeSet<String> = parquet_kernels(&truncated)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let bare: BTreeSet<String> = ["saxpy", "step", "touch", "names_plain"]
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(shown, bare);
}
