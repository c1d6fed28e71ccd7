//! End-to-end: which kernels libkrphase.so replays under a kernel filter, inside the emulator
//! whose kernels carry their code objects' names (mangled, `.kd`), against the selection
//! rocprofv3 makes. For demangled names the truth is `tests/oracles/rocprofv3_filter.cpp`,
//! compiled here: the C++ library's `abi::__cxa_demangle` and ECMAScript `std::regex_search`,
//! the calls rocprofv3's tool makes. For truncated and raw names, and for `'^saxpy'`, the
//! expected kernels are written out by hand.

use krphase_format::FileReader;
use krphase_kernels::{KERNEL_NAMES, KERNEL_SYMBOLS};
use krphase_tests::filters::lines_through;
use krphase_tests::{artifacts, scratch_dir};
use krphase_windows::{DeclineReason, Outcome, Output, Reconstructor};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The two workloads run under every filter: saxpy's `saxpy(double, …)` and names.hip's six.
const WORKLOADS: [&str; 2] = ["saxpy", "names"];

/// The kernels those workloads launch (names inside krphase).
fn launched() -> Vec<&'static str> {
    KERNEL_NAMES
        .iter()
        .zip(KERNEL_SYMBOLS)
        .filter(|(_, (source, _))| WORKLOADS.contains(source))
        .map(|(n, _)| *n)
        .collect()
}

fn symbol(name: &str) -> &'static str {
    krphase_kernels::kernel_symbol(name).expect("a workload kernel")
}

/// The oracle, compiled once.
fn oracle() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/rocprofv3_filter.cpp");
        let bin = scratch_dir("names-oracle").join("rocprofv3_filter");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let o = Command::new(&cxx)
            .args(["-std=c++17", "-O1", "-o"])
            .arg(&bin)
            .arg(&src)
            .output()
            .expect("a C++ compiler (scripts/test installs g++)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        bin
    })
}

/// The kernels (names inside krphase) rocprofv3 selects with these regexes on demangled names.
fn oracle_selects(include: &str, exclude: &str) -> BTreeSet<&'static str> {
    let kernels = launched();
    let symbols: Vec<&str> = kernels.iter().map(|k| symbol(k)).collect();
    let lines = lines_through(Command::new(oracle()).args([include, exclude]), &symbols);
    kernels
        .into_iter()
        .zip(lines)
        .filter(|(_, l)| l.starts_with("1 "))
        .map(|(k, _)| k)
        .collect()
}

/// Runs both workloads with the tool driving 2 passes and `env`; returns the kernels it
/// replayed. Every other launched kernel must be a dispatch the tool opted out.
fn replayed(case: &str, env: &[(&str, &str)]) -> BTreeSet<&'static str> {
    let a = artifacts();
    let mut replayed = BTreeSet::new();
    for wl in WORKLOADS {
        let dir = scratch_dir(&format!("names-{case}-{wl}"));
        let krp = dir.join("run.krp");
        let mut cmd = Command::new(&a.emu);
        cmd.args(["run", wl, "--elements", "64", "--iterations", "1"]);
        for k in krphase_tests::TOOL_AND_EMU_ENV {
            cmd.env_remove(k);
        }
        cmd.env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
            .env("KRPHASE_OUTPUT", &krp)
            .env("KRPHASE_PASSES", "2")
            .envs(env.iter().copied());
        let o = cmd.output().expect("run krphase-emu");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{case} {wl}: {stderr}");
        assert!(!stderr.contains("[krphase] ") || stderr.contains("[krphase] wrote "));
        let (windows, opted_out) = outcomes(&krp);
        for name in windows.iter().chain(&opted_out) {
            assert!(
                KERNEL_SYMBOLS.iter().any(|(_, s)| s == name),
                "{case}: {name} is not a fixture's kernel name"
            );
        }
        for k in launched() {
            let s = symbol(k);
            if KERNEL_SYMBOLS[krphase_kernels::kernel_id(k).unwrap() as usize - 1].0 != wl {
                continue;
            }
            match (windows.contains(s), opted_out.contains(s)) {
                (true, false) => {
                    replayed.insert(k);
                }
                (false, true) => {}
                other => panic!("{case}: {k} replayed/opted out = {other:?}"),
            }
        }
    }
    replayed
}

/// The raw kernel names of the replayed windows and of the opted-out dispatches in a file.
fn outcomes(krp: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut r = FileReader::open(krp).unwrap_or_else(|e| panic!("{}: {e}", krp.display()));
    let mut rc = Reconstructor::new();
    let (mut windows, mut opted_out) = (BTreeSet::new(), BTreeSet::new());
    let mut take = |rc: &mut Reconstructor| {
        while let Some(o) = rc.pop() {
            match o {
                Output::Window(w) if w.outcome == Outcome::Replayed => {
                    windows.insert(w.kernel_name.expect("a named kernel"));
                }
                Output::Decline(d) if d.reason == DeclineReason::OptOut => {
                    opted_out.insert(d.kernel_name.expect("a named kernel"));
                }
                _ => {}
            }
        }
    };
    for e in r.by_ref() {
        rc.push(&e.expect("a readable record"))
            .expect("within the limits");
        take(&mut rc);
    }
    rc.finish();
    take(&mut rc);
    (windows, opted_out)
}

fn set(names: &[&'static str]) -> BTreeSet<&'static str> {
    names.iter().copied().collect()
}

#[test]
fn demangled_names_select_what_rocprofv3s_regex_selects() {
    // (include, exclude): namespaced, templated, overloaded and extern "C" kernels.
    let cases: [(&str, &str); 8] = [
        ("^saxpy", ""),
        ("saxpy", ""),
        ("step<long long>", ""),
        ("^void step<", ""),
        (r"touch\(unsigned long long\*, unsigned long\)", ""),
        ("^names_plain$", ""),
        (".", "^void |^krp::"),
        (r"^(?:touch|names_plain)\b", "unsigned long long\\)"),
    ];
    for (i, (include, exclude)) in cases.into_iter().enumerate() {
        let want = oracle_selects(include, exclude);
        let mut env = vec![("KRPHASE_KERNEL_FILTER", include)];
        if !exclude.is_empty() {
            env.push(("KRPHASE_KERNEL_EXCLUDE", exclude));
        }
        assert_eq!(
            replayed(&format!("d{i}"), &env),
            want,
            "include {include:?} exclude {exclude:?}"
        );
    }
    // The oracle agrees with the hand-written answer for the README's '^saxpy': saxpy(double, …)
    // only, not krp::saxpy(…).
    assert_eq!(oracle_selects("^saxpy", ""), set(&["saxpy"]));
    // rocprofv3's own variables drive the tool when krphase's are unset.
    assert_eq!(
        replayed(
            "rocprof-vars",
            &[
                ("ROCPROF_KERNEL_FILTER_INCLUDE_REGEX", "^void step<"),
                ("ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX", "unsigned"),
            ]
        ),
        oracle_selects("^void step<", "unsigned")
    );
}

#[test]
fn truncated_and_mangled_names_select_by_hand_written_answers() {
    let all: BTreeSet<&str> = launched().into_iter().collect();
    for (case, env, want) in [
        (
            "t-saxpy",
            vec![
                ("KRPHASE_KERNEL_FILTER", "^saxpy$"),
                ("KRPHASE_TRUNCATE_KERNELS", "1"),
            ],
            set(&["saxpy", "names_saxpy"]),
        ),
        (
            "t-step",
            vec![
                ("KRPHASE_KERNEL_FILTER", "^step$"),
                ("ROCPROF_TRUNCATE_KERNELS", "1"),
            ],
            set(&["names_step_u64", "names_step_i64"]),
        ),
        (
            "t-touch",
            vec![
                ("KRPHASE_KERNEL_FILTER", "^touch$"),
                ("KRPHASE_TRUNCATE_KERNELS", "1"),
            ],
            set(&["names_touch", "names_touch_by"]),
        ),
        (
            "m-ns",
            vec![
                ("KRPHASE_KERNEL_FILTER", "^_ZN3krp"),
                ("KRPHASE_MANGLED_KERNELS", "1"),
            ],
            set(&["names_saxpy"]),
        ),
        (
            "m-kd",
            vec![
                ("KRPHASE_KERNEL_FILTER", r"\.kd$"),
                ("ROCPROF_DEMANGLE_KERNELS", "0"),
            ],
            all.clone(),
        ),
        // Demangled, `.kd` is gone: nothing ends with it.
        ("d-kd", vec![("KRPHASE_KERNEL_FILTER", r"\.kd$")], set(&[])),
    ] {
        assert_eq!(replayed(case, &env), want, "{case}");
    }
}

#[test]
fn a_pattern_rust_cannot_compile_is_refused_in_one_line_naming_the_construct() {
    let a = artifacts();
    for (pattern, construct) in [("saxpy(?!_)", "look-ahead"), (r"(s)\1", "backreference")] {
        let dir = scratch_dir("names-refused");
        let krp = dir.join(format!("run-{}.krp", construct));
        let mut cmd = Command::new(&a.emu);
        cmd.args(["run", "saxpy", "--elements", "64", "--iterations", "1"]);
        for k in krphase_tests::TOOL_AND_EMU_ENV {
            cmd.env_remove(k);
        }
        let o = cmd
            .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
            .env("KRPHASE_OUTPUT", &krp)
            .env("KRPHASE_KERNEL_FILTER", pattern)
            .output()
            .expect("run krphase-emu");
        assert!(o.status.success(), "the application runs on");
        let stderr = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("[krphase]"))
            .collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].contains("KRPHASE_KERNEL_FILTER") && lines[0].contains(construct),
            "{}",
            lines[0]
        );
        assert!(!krp.exists(), "nothing written");
    }
}
