//! Module variables reach the tool as real tools reach them: the loader's `iterate_executables`
//! comes from ROCr's extension table (`hsa_system_get_major_extension_table`), asked for once HSA
//! is initialized. A saxpy run counts `saxpy_calls`' bytes exactly as the emulator's truth lists
//! them; with an older runtime's table, or none, the tool says which in one line and one NOTICE
//! record, and counts no variable.

use krphase_format::event::{Notice, module_vars_left_out};
use krphase_format::{Event, FileReader};
use krphase_kernels::saxpy::COUNTER_SYMBOL;
use krphase_tests::{LoggedRun, read_truth, run_logged};
use serde_json::Value;

/// What the file says about module variables.
#[derive(Debug, Default)]
struct Seen {
    /// MODULE_VARS records: agent, bytes, variables, attribution.
    module_vars: Vec<(u64, u64, u16, u8)>,
    /// NOTICE records: code, a, b.
    notices: Vec<(Notice, u64, u64)>,
}

fn read(run: &LoggedRun) -> Seen {
    let r = FileReader::open(&run.krp).unwrap_or_else(|e| panic!("{}: {e}", run.krp.display()));
    let mut seen = Seen::default();
    for e in r {
        match e.expect("a readable record") {
            Event::ModuleVars {
                agent,
                bytes,
                variables,
                attribution,
                ..
            } => seen
                .module_vars
                .push((agent, bytes, variables, attribution)),
            Event::Notice { notice, a, b, .. } => seen.notices.push((notice, a, b)),
            _ => {}
        }
    }
    seen
}

/// The tool's stderr lines but its finalize line.
fn tool_lines(run: &LoggedRun) -> Vec<String> {
    std::fs::read_to_string(&run.log)
        .expect("read the run's stderr")
        .lines()
        .filter(|l| l.starts_with("[krphase]") && !l.starts_with("[krphase] wrote "))
        .map(str::to_string)
        .collect()
}

fn truth_of<'a>(truth: &'a [Value], ty: &str) -> Vec<&'a Value> {
    truth.iter().filter(|v| v["type"] == ty).collect()
}

fn saxpy(name: &str, loader_table: &str) -> LoggedRun {
    run_logged(
        name,
        &[
            "saxpy",
            "--elements",
            "64",
            "--iterations",
            "2",
            "--loader-table",
            loader_table,
        ],
        &[],
    )
}

#[test]
fn saxpy_calls_is_counted_exactly_through_the_extension_table() {
    let run = saxpy("modvars-table", "1.03");
    let truth = read_truth(&run.truth);
    let objects = truth_of(&truth, "code_object");
    assert_eq!(objects.len(), 1, "{objects:?}");
    let var = objects[0]["variables"]
        .as_array()
        .expect("variables")
        .iter()
        .find(|v| v["name"] == COUNTER_SYMBOL)
        .unwrap_or_else(|| panic!("{COUNTER_SYMBOL} in the loaded code object: {objects:?}"));
    let (agent, size) = (
        var["agent"].as_u64().unwrap(),
        var["size"].as_u64().unwrap(),
    );
    assert_eq!(size, 8, "{var}");
    // The tool asked for the whole 1.03 table once HSA was up, and got it.
    let asked = truth_of(&truth, "extension_table");
    assert!(
        !asked.is_empty(),
        "the tool never asked for the loader table"
    );
    for a in &asked {
        assert_eq!(
            (&a["extension"], &a["major"], &a["length"]),
            (&0x201.into(), &1.into(), &56.into()),
            "{a}"
        );
        assert_eq!((&a["status"], &a["copied"]), (&0.into(), &56.into()), "{a}");
    }
    let seen = read(&run);
    assert_eq!(
        seen.module_vars,
        [(
            agent,
            size,
            1,
            krphase_format::event::attribution::CODE_OBJECT
        )],
        "the writable, placed variables the snapshot copies: {COUNTER_SYMBOL} alone"
    );
    assert!(
        seen.notices
            .iter()
            .all(|n| n.0 != Notice::ModuleVarsLeftOut)
    );
    assert_eq!(tool_lines(&run), Vec::<String>::new());
}

#[test]
fn without_iterate_executables_one_line_and_one_notice_say_why() {
    let cases = [
        (
            "1.02",
            "ROCr's loader extension table has no hsa_ven_amd_loader_iterate_executables \
             (the runtime filled a table older than 1.03)",
            (0, module_vars_left_out::NO_ITERATE_EXECUTABLES),
            (0, 48),
        ),
        (
            "none",
            "hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, 56) returned \
             0x1000 (HSA_STATUS_ERROR)",
            (0x1000, module_vars_left_out::TABLE_STATUS),
            (0x1000, 0),
        ),
    ];
    for (table, why, (a, b), (status, copied)) in cases {
        let run = saxpy(&format!("modvars-{table}"), table);
        assert_eq!(
            tool_lines(&run),
            [format!(
                "[krphase] {why}; module-scope variables are left out of the byte estimate"
            )],
            "--loader-table {table}"
        );
        let seen = read(&run);
        assert_eq!(
            seen.notices
                .iter()
                .filter(|n| n.0 == Notice::ModuleVarsLeftOut)
                .collect::<Vec<_>>(),
            [&(Notice::ModuleVarsLeftOut, a, b)],
            "--loader-table {table}"
        );
        assert_eq!(
            seen.module_vars,
            [],
            "--loader-table {table}: nothing counted"
        );
        let truth = read_truth(&run.truth);
        for t in truth_of(&truth, "extension_table") {
            assert_eq!(
                (&t["status"], &t["copied"]),
                (&status.into(), &copied.into()),
                "--loader-table {table}: {t}"
            );
        }
    }
}
