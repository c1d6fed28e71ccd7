//! The emulated SDK exports every function the SDK's public headers declare
//! (`kernels/emu/api/declared-functions.txt`), and a tool that asks for a service the emulator
//! does not model gets the error status a real SDK without it returns and carries on, instead of
//! dying at the call.

use krphase_tests::{TOOL_AND_EMU_ENV, artifacts, output_text, read_truth_if_any, scratch_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn declared_list() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("api/declared-functions.txt")
}

fn declared_names() -> Vec<String> {
    std::fs::read_to_string(declared_list())
        .expect("read the declared-functions list")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// Compiles the C tool `clients/<name>.c` into a shared library in a scratch directory
/// (`$CC`, default `cc`), with `defines` as `-D` flags; panics with the compiler's output when it
/// fails.
fn compile_client(name: &str, defines: &[&str]) -> PathBuf {
    let clients = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients");
    let out = scratch_dir(&format!("client-{name}")).join(format!("lib{name}.so"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args([
        "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC",
    ])
    .arg("-I")
    .arg(&clients);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    cmd.arg("-o")
        .arg(&out)
        .arg(clients.join(format!("{name}.c")))
        .arg("-ldl");
    let o = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run the C compiler {cc:?} ({e}); install one (Debian: gcc) or set CC")
    });
    assert!(o.status.success(), "compiling {name}: {}", output_text(&o));
    out
}

/// Runs the samples application with `tool` as the only tool; returns its output and truth.
fn run_with(tool: &Path, tag: &str, env: &[(&str, &Path)]) -> (Output, Vec<serde_json::Value>) {
    let dir = scratch_dir(tag);
    let truth = dir.join("truth.jsonl");
    let mut cmd = Command::new(&artifacts().emu);
    cmd.args(["run", "samples", "--iterations", "1"]);
    for k in TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    cmd.env("ROCP_TOOL_LIBRARIES", tool)
        .env("KRPHASE_EMU_TRUTH", &truth);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run krphase-emu");
    (out, read_truth_if_any(&truth))
}

#[test]
fn the_list_is_names_only_and_has_no_duplicates() {
    let names = declared_names();
    assert!(names.len() >= 80, "{} names", names.len());
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "duplicate names");
    for n in &names {
        assert!(
            n.starts_with("rocprofiler_")
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "not a function name: {n:?}"
        );
        assert_ne!(
            n, "rocprofiler_configure",
            "tools define rocprofiler_configure, not the SDK"
        );
    }
}

#[test]
fn every_declared_function_resolves_in_the_emulator() {
    let probe = compile_client("exports_probe", &[]);
    let list = declared_list();
    let (out, _) = run_with(&probe, "sdk-exports", &[("KRP_DECLARED_LIST", &list)]);
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let want = format!(
        "[exports-probe] resolved={} missing=0",
        declared_names().len()
    );
    assert!(text.contains(&want), "expected {want:?}: {text}");
}

#[test]
fn a_tool_refused_a_service_skips_it_and_the_run_goes_on() {
    let client = compile_client("service_sequence", &["KRP_KIND=25"]);
    let (out, truth) = run_with(&client, "service-sequence", &[]);
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("result samples ok")),
        "{text}"
    );
    for line in [
        "[service-sequence] PC sampling unavailable (ROCPROFILER_STATUS_ERROR_NOT_AVAILABLE)",
        "[service-sequence] ATT unavailable (ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED)",
        "[service-sequence] SPM unavailable (ROCPROFILER_STATUS_ERROR_NOT_IMPLEMENTED)",
        "[service-sequence] SKIPPED: 3 services unavailable",
    ] {
        assert!(text.contains(line), "missing {line:?}: {text}");
    }
    let refused: Vec<(&str, u64)> = truth
        .iter()
        .filter(|t| t["type"] == "unavailable")
        .filter_map(|t| Some((t["function"].as_str()?, t["status"].as_u64()?)))
        .collect();
    assert_eq!(
        refused,
        [
            ("rocprofiler_query_pc_sampling_agent_configurations", 37),
            ("rocprofiler_configure_dispatch_thread_trace_service", 17),
            ("rocprofiler_spm_configure_callback_dispatch_service", 17),
        ]
    );
}

/// A configure function handed to `rocprofiler_force_configure` before start-up (from a preloaded
/// library's constructor) is accepted (status 0) and configured first, as in the SDK's
/// `find_clients()`: priority 0, the listed probe after it at priority 1.
#[test]
fn a_forced_configure_is_the_first_client() {
    let forced = compile_client("forced_configure", &[]);
    let dir = scratch_dir("forced-configure");
    let probe_out = dir.join("probe.json");
    let mut cmd = Command::new(&artifacts().emu);
    cmd.args(["run", "samples", "--iterations", "1"]);
    for k in TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    let out = cmd
        .env("ROCP_TOOL_LIBRARIES", &artifacts().probe_lib)
        .env("LD_PRELOAD", &forced)
        .env("PROBE_SCENARIO", "observe")
        .env("PROBE_OUT", &probe_out)
        .output()
        .expect("run krphase-emu");
    let text = output_text(&out);
    assert!(out.status.success(), "{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[forced-configure] status=0"), "{text}");
    assert!(stdout.contains("[forced-configure] priority=0"), "{text}");
    let probe: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&probe_out).expect("probe output"))
            .expect("probe JSON");
    assert_eq!(probe["configure"]["priority"].as_u64(), Some(1), "{text}");
}
