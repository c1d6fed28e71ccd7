//! Conformance clients of our own (`kernels/emu/clients/*.c`): what the SDK's kernel-replay sample
//! clients check, compiled at test time by the system C compiler against krphase's own
//! declarations of the ABI, once per payload layout, KERNEL_REPLAY kind number, `replay_continue`
//! `user_data` contract and pass-count-1 rule (the last two matter to the user-data and
//! pass-count-one clients), and run unchanged in `krphase-emu run samples`.
//! Each client checks its counts in its finalize and aborts on a mismatch; the samples
//! application fails unless both its counters read 1 (the restore check). The counters client's
//! records are also checked against the emulator's ground truth and its value model.

use krphase_tests::{artifacts, output_text, read_truth_if_any, scratch_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KINDS: [u32; 3] = [23, 25, 26];
const LAYOUTS: [Layout; 2] = [Layout::A, Layout::B];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    A,
    B,
}

impl Layout {
    fn emu(self) -> &'static str {
        match self {
            Layout::A => "a",
            Layout::B => "b",
        }
    }
}

/// Which `user_data` the client expects `replay_continue` to receive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Contract {
    Config,
    Pass,
}

impl Contract {
    fn emu(self) -> &'static str {
        match self {
            Contract::Config => "config",
            Contract::Pass => "pass",
        }
    }
}

/// What a pass count of 1 means to the SDK build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OneRule {
    NoReplay,
    OnePass,
}

impl OneRule {
    fn emu(self) -> &'static str {
        match self {
            OneRule::NoReplay => "no-replay",
            OneRule::OnePass => "one-pass",
        }
    }
}

const CONTRACTS: [Contract; 2] = [Contract::Config, Contract::Pass];
const ONE_RULES: [OneRule; 2] = [OneRule::NoReplay, OneRule::OnePass];

/// One build of one client: its source, and the SDK build it was compiled for.
#[derive(Clone, Copy, Debug)]
struct Build {
    client: &'static str,
    kind: u32,
    layout: Layout,
    contract: Contract,
    one: OneRule,
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("clients")
}

/// Compiles `b` into a shared library (`$CC`, default `cc`), once per process and build.
fn compile(b: Build) -> PathBuf {
    // One build directory per process (`scratch_dir` empties the directory it names).
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| scratch_dir("sample-clients-build"));
    let name = format!(
        "lib{}-k{}-{:?}-{:?}-{:?}.so",
        b.client, b.kind, b.layout, b.contract, b.one
    );
    let out = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args([
        "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC",
    ])
    .arg(format!("-DKRP_KIND={}", b.kind))
    .arg("-I")
    .arg(clients_dir());
    if b.layout == Layout::A {
        cmd.arg("-DKRP_LAYOUT_A");
    }
    cmd.arg(match b.contract {
        Contract::Pass => "-DKRP_CONTINUE_PASS",
        Contract::Config => "-DKRP_CONTINUE_CONFIG",
    });
    if b.one == OneRule::OnePass {
        cmd.arg("-DKRP_PASS_COUNT_ONE_REPLAYS");
    }
    // Tests run in parallel and may build the same client: each compiles to its own file and
    // renames it into place, which is atomic.
    let tmp = dir.join(format!(
        "{}.{}.{:?}.tmp",
        out.file_name().unwrap().to_string_lossy(),
        std::process::id(),
        std::thread::current().id()
    ));
    cmd.arg("-o")
        .arg(&tmp)
        .arg(clients_dir().join(format!("{}.c", b.client)));
    let o = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run the C compiler {cc:?} ({e}); install one (Debian: gcc) or set CC")
    });
    assert!(o.status.success(), "compiling {b:?}: {}", output_text(&o));
    std::fs::rename(&tmp, &out).expect("move the built client into place");
    out
}

/// What the emulated SDK build is: the kind number, the payload layout, the continue contract,
/// the pass-count-1 rule.
struct Sdk {
    kind: u32,
    layout: Layout,
    contract: Contract,
    one: OneRule,
}

impl Sdk {
    /// The SDK build a client build was compiled for.
    fn of(b: Build) -> Sdk {
        Sdk {
            kind: b.kind,
            layout: b.layout,
            contract: b.contract,
            one: b.one,
        }
    }
}

/// Runs the samples application once with `lib` as the only tool on the emulated SDK `sdk`.
fn run(lib: &Path, sdk: &Sdk, tag: &str) -> (Output, Vec<Value>) {
    let a = artifacts();
    let dir = scratch_dir(&format!("sample-clients-{tag}"));
    let truth = dir.join("truth.jsonl");
    let mut cmd = Command::new(&a.emu);
    cmd.args(["run", "samples", "--iterations", "1"])
        .args(["--replay-kind", &sdk.kind.to_string()])
        .args(["--payload-layout", sdk.layout.emu()])
        .args(["--continue-user-data", sdk.contract.emu()])
        .args(["--pass-count-one", sdk.one.emu()]);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    cmd.env("ROCP_TOOL_LIBRARIES", lib)
        .env("KRPHASE_EMU_TRUTH", &truth);
    let out = cmd.output().expect("run krphase-emu");
    (out, read_truth_if_any(&truth))
}

/// Every SDK build of the matrix: kinds × layouts × `user_data` contracts × pass-count-1 rules.
fn matrix(client: &'static str) -> Vec<Build> {
    let mut out = Vec::new();
    for kind in KINDS {
        for layout in LAYOUTS {
            for contract in CONTRACTS {
                for one in ONE_RULES {
                    out.push(Build {
                        client,
                        kind,
                        layout,
                        contract,
                        one,
                    });
                }
            }
        }
    }
    out
}

/// Builds `client` for every SDK build of the matrix (the contract and the pass-count rule
/// restricted by `keep`) and runs each build on the matching SDK build; returns each build with
/// the truth of its run.
fn passes_everywhere(
    client: &'static str,
    keep: impl Fn(&Build) -> bool,
) -> Vec<(Build, Vec<Value>)> {
    let mut truths = Vec::new();
    for b in matrix(client).into_iter().filter(|b| keep(b)) {
        let tag = format!(
            "{client}-{}-{:?}-{:?}-{:?}",
            b.kind, b.layout, b.contract, b.one
        );
        let (out, truth) = run(&compile(b), &Sdk::of(b), &tag);
        assert!(
            out.status.success(),
            "{tag}: the client or the samples app failed: {}",
            output_text(&out)
        );
        let last = String::from_utf8_lossy(&out.stdout);
        assert!(
            last.lines()
                .last()
                .is_some_and(|l| l.starts_with("result samples ok")),
            "{tag}: both counters read 1: {last}"
        );
        truths.push((b, truth));
    }
    truths
}

/// Every build of the matrix.
fn all(_: &Build) -> bool {
    true
}

fn windows(truth: &[Value]) -> Vec<&Value> {
    truth.iter().filter(|t| t["type"] == "window").collect()
}

#[test]
fn basic_four_passes_one_replay() {
    for (_, truth) in passes_everywhere("basic", all) {
        let w = windows(&truth);
        assert_eq!(w.len(), 1, "only bump is replayed");
        assert_eq!(
            (w[0]["kernel"].as_str(), w[0]["executed_passes"].as_u64()),
            (Some("bump"), Some(4))
        );
    }
}

#[test]
fn user_data_under_the_config_contract() {
    let runs = passes_everywhere("user_data", |b| b.contract == Contract::Config);
    assert_eq!(runs.len(), KINDS.len() * LAYOUTS.len() * ONE_RULES.len());
}

#[test]
fn user_data_under_the_pass_contract() {
    let runs = passes_everywhere("user_data", |b| b.contract == Contract::Pass);
    for (_, truth) in runs {
        assert_eq!(
            windows(&truth)[0]["executed_passes"],
            2,
            "stopped after pass 1"
        );
    }
}

/// A pass count of 1 is no replay (a `pass_count_1` decline, no window) or a loop of one pass
/// (a window of one pass and no restore), as the SDK build's rule says.
#[test]
fn pass_count_one_under_both_rules() {
    for (b, truth) in passes_everywhere("pass_count_one", all) {
        let declines: Vec<_> = truth
            .iter()
            .filter(|t| t["type"] == "decline" && t["kernel"] == "bump")
            .collect();
        let w = windows(&truth);
        match b.one {
            OneRule::NoReplay => {
                assert!(w.is_empty(), "{b:?}: no window");
                assert_eq!(declines.len(), 1, "{b:?}");
                assert_eq!(declines[0]["reason"], "pass_count_1", "{b:?}");
            }
            OneRule::OnePass => {
                assert!(declines.is_empty(), "{b:?}: no decline");
                assert_eq!(w.len(), 1, "{b:?}");
                assert_eq!(w[0]["requested_passes"], 1, "{b:?}");
                assert_eq!(w[0]["executed_passes"], 1, "{b:?}");
                assert_eq!(w[0]["restores"].as_array().map(Vec::len), Some(0), "{b:?}");
            }
        }
    }
}

#[test]
fn toggles_stop_and_start_the_counting_context_for_the_loop() {
    for (_, truth) in passes_everywhere("toggles", all) {
        assert_eq!(windows(&truth)[0]["executed_passes"], 4);
    }
}

#[test]
fn opt_out_replays_only_the_target() {
    for (_, truth) in passes_everywhere("opt_out", all) {
        let declines: Vec<_> = truth.iter().filter(|t| t["type"] == "decline").collect();
        assert_eq!(declines.len(), 1);
        assert_eq!(
            (
                declines[0]["kernel"].as_str(),
                declines[0]["reason"].as_str()
            ),
            (Some("nudge"), Some("opt_out"))
        );
        assert_eq!(windows(&truth)[0]["executed_passes"], 3);
    }
}

/// One counter_record truth line: kernel id, pass (None: not a replay pass), (name, value)s.
type CounterLine = (u64, Option<u64>, Vec<(String, f64)>);

/// The counter_record truth lines of one run.
fn counter_records(truth: &[Value]) -> Vec<CounterLine> {
    truth
        .iter()
        .filter(|t| t["type"] == "counter_record")
        .map(|t| {
            let counters = t["counters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap().to_string(),
                        c["value"].as_f64().unwrap(),
                    )
                })
                .collect();
            (
                t["kernel_id"].as_u64().unwrap(),
                t["pass"].as_u64(),
                counters,
            )
        })
        .collect()
}

fn kernel_id(name: &str) -> u64 {
    krphase_kernels::kernel_id(name).expect("a samples kernel")
}

/// The emulator's model for bump<<<1, 67>>>: 2 waves, GRBM_GUI_ACTIVE 1000 + 4 x 67, GRBM_COUNT
/// 100 more; nudge<<<1, 64>>>: 1 wave.
fn expect_records(truth: &[Value], passes: usize) {
    let names = ["SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE"];
    let values = [2.0, 1368.0, 1268.0];
    let recs = counter_records(truth);
    let bump: Vec<_> = recs.iter().filter(|r| r.0 == kernel_id("bump")).collect();
    assert_eq!(bump.len(), passes, "exactly one record per executed pass");
    for (i, r) in bump.iter().enumerate() {
        assert_eq!(r.1, Some(i as u64), "records in pass order");
        assert_eq!(r.2, vec![(names[i].to_string(), values[i])], "pass {i}");
    }
    let nudge: Vec<_> = recs.iter().filter(|r| r.0 == kernel_id("nudge")).collect();
    assert_eq!(nudge.len(), 1, "one record for the dispatch that ran once");
    assert_eq!(nudge[0].1, None);
    assert_eq!(nudge[0].2, vec![("SQ_WAVES".to_string(), 1.0)]);
}

#[test]
fn counters_one_record_per_pass_with_the_models_values() {
    for (_, truth) in passes_everywhere("counters", all) {
        expect_records(&truth, 3);
    }
}

#[test]
fn early_exit_two_of_four_passes_with_counter_records() {
    for (_, truth) in passes_everywhere("early_exit", all) {
        assert_eq!(windows(&truth)[0]["executed_passes"], 2);
        expect_records(&truth, 2);
    }
}

/// A client built for another SDK build fails: another layout (the SDK reads NULL where the
/// client wrote its pass count, so nothing is replayed and the counts are wrong), another kind
/// (configure fails), the other `replay_continue` contract, or the other pass-count-1 rule.
#[test]
fn a_client_built_for_another_sdk_fails() {
    let b = |client, kind, layout, contract| Build {
        client,
        kind,
        layout,
        contract,
        one: OneRule::NoReplay,
    };
    let sdk = |kind, layout, contract| Sdk {
        kind,
        layout,
        contract,
        one: OneRule::NoReplay,
    };
    let one_pass = |mut x: Build| {
        x.one = OneRule::OnePass;
        x
    };
    let cases = [
        (
            "layout",
            b("basic", 25, Layout::A, Contract::Config),
            sdk(25, Layout::B, Contract::Config),
        ),
        (
            "layout-b",
            b("counters", 23, Layout::B, Contract::Config),
            sdk(23, Layout::A, Contract::Config),
        ),
        (
            "kind",
            b("basic", 23, Layout::B, Contract::Config),
            sdk(25, Layout::B, Contract::Config),
        ),
        (
            "kind-26",
            b("early_exit", 26, Layout::A, Contract::Config),
            sdk(25, Layout::A, Contract::Config),
        ),
        (
            "contract",
            b("user_data", 25, Layout::B, Contract::Config),
            sdk(25, Layout::B, Contract::Pass),
        ),
        (
            "contract-pass",
            b("user_data", 26, Layout::A, Contract::Pass),
            sdk(26, Layout::A, Contract::Config),
        ),
        (
            "one-rule",
            one_pass(b("pass_count_one", 25, Layout::B, Contract::Pass)),
            sdk(25, Layout::B, Contract::Pass),
        ),
        (
            "one-rule-no-replay",
            b("pass_count_one", 23, Layout::A, Contract::Pass),
            Sdk::of(one_pass(b("pass_count_one", 23, Layout::A, Contract::Pass))),
        ),
    ];
    for (tag, build, on) in cases {
        let (out, _) = run(&compile(build), &on, &format!("wrong-{tag}"));
        assert!(
            !out.status.success(),
            "{tag}: a client built for another SDK must fail: {}",
            output_text(&out)
        );
    }
}
