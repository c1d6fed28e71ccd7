//! End-to-end: libkrphase.so inside the emulator, its file decoded with krphase-format and
//! compared with the emulator's ground truth (KRPHASE_EMU_TRUTH).

use krphase_format::clock::MAX_PAIR_WIDTH_NS;
use krphase_format::header::Clock;
use krphase_format::trailer::flags;
use krphase_format::{FileReader, Header, Trailer};
use krphase_tests::{artifacts, read_truth_if_any, scratch_dir};
use krphase_windows::{
    Decline, DeclineReason, Outcome, Output, PlainDispatch, Reconstructor, Source, Window,
};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output as ProcOutput};

/// How the tool's finalize line starts.
const WROTE: &str = "[krphase] wrote ";

struct Run {
    dir: PathBuf,
    out: ProcOutput,
    truth: Vec<Value>,
}

impl Run {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    /// The tool's stderr lines but the finalize line (see [`Run::written_lines`]).
    fn krphase_lines(&self) -> Vec<String> {
        self.stderr()
            .lines()
            .filter(|l| l.starts_with("[krphase]") && !l.starts_with(WROTE))
            .map(str::to_string)
            .collect()
    }
    /// The tool's finalize lines: the path written and its counts.
    fn written_lines(&self) -> Vec<String> {
        self.stderr()
            .lines()
            .filter(|l| l.starts_with(WROTE))
            .map(str::to_string)
            .collect()
    }
    fn krp_files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .expect("scratch dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "krp"))
            .collect();
        v.sort();
        v
    }
    fn krp(&self) -> PathBuf {
        let f = self.krp_files();
        assert_eq!(
            f.len(),
            1,
            "one .krp file expected in {}: {f:?}\n{}",
            self.dir.display(),
            self.stderr()
        );
        f[0].clone()
    }
    fn truth_of(&self, ty: &str) -> Vec<&Value> {
        self.truth.iter().filter(|v| v["type"] == ty).collect()
    }
    /// The emulator succeeded and the tool printed no `[krphase]` line.
    fn assert_quiet_ok(&self) {
        self.assert_ok();
        assert!(
            self.krphase_lines().is_empty(),
            "unexpected tool lines: {:?}",
            self.krphase_lines()
        );
    }
    /// The emulator succeeded and the tool printed exactly one `[krphase]` line, containing
    /// `what` (`ctx` names the case in the message).
    fn assert_one_line(&self, what: &str, ctx: &str) {
        self.assert_ok();
        let lines = self.krphase_lines();
        assert_eq!(lines.len(), 1, "{ctx}: {lines:?}");
        assert!(lines[0].contains(what), "{ctx}: {lines:?}");
    }
    fn assert_ok(&self) {
        assert!(
            self.out.status.success(),
            "emulator failed: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.out.status,
            self.stdout(),
            self.stderr()
        );
        assert!(
            self.stdout()
                .lines()
                .last()
                .is_some_and(|l| l.contains(" ok ")),
            "{}",
            self.stdout()
        );
    }
}

/// `WORKLOAD --elements E --iterations I EXTRA...`.
fn workload<'a>(
    wl: &'a str,
    elements: &'a str,
    iterations: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v = vec![wl, "--elements", elements, "--iterations", iterations];
    v.extend_from_slice(extra);
    v
}

/// Runs `krphase-emu run ARGS` with the tool loaded and ground truth on.
fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
    let a = artifacts();
    let dir = scratch_dir(name);
    let truth = dir.join("truth.jsonl");
    let mut cmd = Command::new(&a.emu);
    cmd.arg("run").args(args).current_dir(&dir);
    for k in krphase_tests::TOOL_AND_EMU_ENV {
        cmd.env_remove(k);
    }
    cmd.env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("KRPHASE_OUTPUT", dir.join("krphase-%pid%.krp"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run krphase-emu");
    let truth = read_truth_if_any(&truth);
    Run { dir, out, truth }
}

#[derive(Default)]
struct Decoded {
    header: Header,
    windows: Vec<Window>,
    declines: Vec<Decline>,
    plains: Vec<PlainDispatch>,
    /// Counter values that came out on their own (not attached to a pass).
    counters: Vec<krphase_windows::CounterReading>,
    trailer: Option<Trailer>,
    truncated: bool,
    records: u64,
    notices: Vec<krphase_format::event::Notice>,
}

impl Decoded {
    /// The windows with this outcome.
    fn with_outcome(&self, outcome: Outcome) -> Vec<&Window> {
        self.windows
            .iter()
            .filter(|w| w.outcome == outcome)
            .collect()
    }
    /// Every window by its dispatch id.
    fn by_id(&self) -> HashMap<u64, &Window> {
        self.windows.iter().map(|w| (w.dispatch_id, w)).collect()
    }
}

fn decode(path: &Path) -> Decoded {
    let mut r = FileReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut d = Decoded {
        header: r.header().clone(),
        ..Decoded::default()
    };
    let mut rc = Reconstructor::new();
    let take = |rc: &mut Reconstructor, d: &mut Decoded| {
        while let Some(o) = rc.pop() {
            match o {
                Output::Window(w) => d.windows.push(w),
                Output::Decline(x) => d.declines.push(x),
                Output::Plain(p) => d.plains.push(p),
                Output::Counter(c) => d.counters.push(c),
            }
        }
    };
    for e in r.by_ref() {
        let e = e.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if !matches!(e, krphase_format::Event::Name { .. }) {
            d.records += 1;
        }
        if let krphase_format::Event::Notice { notice, .. } = e {
            d.notices.push(notice);
        }
        rc.push(&e).expect("within the reconstruction limits");
        take(&mut rc, &mut d);
    }
    rc.finish();
    take(&mut rc, &mut d);
    d.trailer = r.trailer().copied();
    d.truncated = r.truncated();
    d
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// How far a tool time may lie outside the truth's readings around its callback: nothing in a
/// BOOTTIME file; in a TSC file the reader's conversion error, which `krphase_format::clock`
/// bounds by half the widths of the two calibration pairs around the record (each at most
/// `MAX_PAIR_WIDTH_NS`) plus a slew term of tens of ns. A misplaced stamp is a whole phase off.
fn slack(h: &Header) -> u64 {
    match h.clock {
        Clock::Boottime => 0,
        _ => 2 * MAX_PAIR_WIDTH_NS,
    }
}

/// Checks tool times against the truth's clock readings taken just before the callback the tool
/// stamps in and just after it returns: the same clock on both sides, so a stamp lies between
/// them however long the machine keeps either thread waiting.
struct Brackets {
    slack: u64,
    /// Per thread, the truth's CONFIG ENTER readings in order: the next window of a thread
    /// begins after its previous CONFIG EXIT callback returned.
    config_enters: HashMap<u64, Vec<u64>>,
}

impl Brackets {
    fn new(d: &Decoded, truth_windows: &[&Value]) -> Brackets {
        let mut config_enters: HashMap<u64, Vec<u64>> = HashMap::new();
        for t in truth_windows {
            config_enters
                .entry(u(&t["thread"]))
                .or_default()
                .push(u(&t["config_enter"]));
        }
        config_enters.values_mut().for_each(|v| v.sort_unstable());
        Brackets {
            slack: slack(&d.header),
            config_enters,
        }
    }

    /// The tool's `what` of dispatch `id` lies in the truth's `[from, to]`.
    fn check(&self, what: &str, id: u64, tool: u64, from: u64, to: u64) {
        assert!(
            tool.saturating_add(self.slack) >= from && tool <= to.saturating_add(self.slack),
            "dispatch {id}: the tool's {what} {tool} lies outside the truth's [{from}, {to}] \
             (slack {} ns)",
            self.slack
        );
    }

    /// The `thread`'s next truth CONFIG ENTER after `config_enter` (none: the thread's last
    /// window, bounded by nothing in the truth).
    fn next_window(&self, thread: u64, config_enter: u64) -> u64 {
        self.config_enters[&thread]
            .iter()
            .copied()
            .find(|&c| c > config_enter)
            .unwrap_or(u64::MAX)
    }
}

/// Length of a truth span (`{"start","end"}`); a null phase (not reached) is 0.
fn len(v: &Value) -> u64 {
    if v.is_null() {
        0
    } else {
        u(&v["end"]) - u(&v["start"])
    }
}

/// Checks a drive-mode run against its truth; returns the number of windows matched.
fn check_drive(r: &Run, n: u64) -> usize {
    r.assert_quiet_ok();
    let d = decode(&r.krp());
    assert!(!d.truncated);
    let tr = d.trailer.expect("trailer after a clean exit");
    assert_eq!(tr.dropped_window, 0);
    let truth_windows = r.truth_of("window");
    assert!(!truth_windows.is_empty());
    let replayed = d.with_outcome(Outcome::Replayed);
    assert_eq!(replayed.len(), truth_windows.len(), "windows 1:1");
    assert_eq!(tr.windows as usize, truth_windows.len());
    let by_id: HashMap<u64, &Window> = replayed.iter().map(|w| (w.dispatch_id, *w)).collect();
    let brackets = Brackets::new(&d, &truth_windows);
    for t in &truth_windows {
        let id = u(&t["dispatch_id"]);
        let w = by_id
            .get(&id)
            .unwrap_or_else(|| panic!("no tool window for dispatch {id}"));
        check_window(t, w, n, &brackets);
    }
    truth_windows.len()
}

/// One replayed window against its truth line: identity, passes and GPU times exactly; every
/// host time of the tool inside the truth's readings around the callback it was taken in.
fn check_window(t: &Value, w: &Window, n: u64, b: &Brackets) {
    let id = u(&t["dispatch_id"]);
    assert_eq!(t["outcome"], "replayed");
    assert_eq!(w.source, Source::Drive);
    // The tool keeps the SDK's name: the kernel's descriptor symbol in its code object.
    let symbol = krphase_kernels::kernel_symbol(t["kernel"].as_str().unwrap());
    assert_eq!(w.kernel_name.as_deref(), symbol);
    assert_eq!(w.kernel_id, Some(u(&t["kernel_id"])));
    assert_eq!(w.agent, Some(u(&t["agent"])));
    assert_eq!(w.queue, Some(u(&t["queue"])));
    assert_eq!(u64::from(w.thread), u(&t["thread"]));
    assert_eq!(w.correlation_id, Some(u(&t["correlation_id"])));
    assert_eq!(w.requested_passes, Some(n));
    assert_eq!(w.executed_passes, u(&t["executed_passes"]));
    // CONFIG ENTER and the pass-count call, between the truth's reading before CONFIG ENTER
    // and its reading after the pass-count call returned.
    let (ce, pcr) = (u(&t["config_enter"]), u(&t["pass_count_return"]));
    b.check(
        "CONFIG ENTER",
        id,
        w.config_enter.expect("CONFIG ENTER"),
        ce,
        pcr,
    );
    let tool_pcr = w.pass_count_return.expect("pass-count return");
    b.check("pass-count return", id, tool_pcr, ce, pcr);
    let tp = t["passes"].as_array().expect("passes");
    assert_eq!(w.passes.len(), tp.len());
    for (p, q) in w.passes.iter().zip(tp) {
        assert_eq!(
            p.gpu_start,
            Some(u(&q["gpu_start"])),
            "GPU start is the SDK's value"
        );
        assert_eq!(p.gpu_end, Some(u(&q["gpu_end"])));
        // PASS ENTER: from the truth's reading before it to the pass's enqueue, which follows
        // its return (and a device-order restore); PASS EXIT: the callback's own span.
        let enter = p.enter.expect("PASS ENTER");
        b.check(
            "PASS ENTER",
            id,
            enter,
            u(&q["enter"]),
            u(&q["enqueue_callback"]),
        );
        let exit = p.exit.expect("PASS EXIT");
        let xc = &q["exit_callback"];
        b.check("PASS EXIT", id, exit, u(&xc["start"]), u(&xc["end"]));
    }
    // Pre-pass: pass-count return → PASS 0 ENTER = setup, lock, admission, drains, snapshot
    // and pass 0's prepare.
    let pre = w.pre_pass.expect("pre-pass");
    assert_eq!((pre.start, pre.end), (tool_pcr, w.passes[0].enter.unwrap()));
    let phases: u64 = [
        "setup",
        "lock_wait",
        "admission",
        "queue_drain",
        "agent_drain",
        "snapshot",
    ]
    .iter()
    .map(|k| len(&t[*k]))
    .sum::<u64>()
        + len(&tp[0]["prepare"]);
    assert_eq!(
        phases,
        u(&tp[0]["enter"]) - pcr,
        "truth phases tile the pre-pass"
    );
    let trs = t["restores"].as_array().expect("restores");
    assert_eq!(w.restores.len(), trs.len());
    for (x, q) in w.restores.iter().zip(trs) {
        let i = u(&q["after_pass"]) as usize;
        assert_eq!(x.after_pass as usize, i);
        // The tool splits the gap PASS i EXIT → PASS i+1 ENTER at the continue call's return
        // (check_continues ties the pieces to the pass stamps).
        let c = x.continue_phase.expect("a continue phase in every gap");
        let tc = &tp[i]["continue"];
        b.check("continue return", id, c.end, u(&tc["start"]), u(&tc["end"]));
    }
    for c in &w.continues {
        let tc = &tp[c.after_pass as usize]["continue"];
        let (from, to) = (u(&tc["start"]), u(&tc["end"]));
        b.check("continue call entry", id, c.call.start, from, to);
        b.check("continue call return", id, c.call.end, from, to);
    }
    check_continues(w, n);
    // Last PASS EXIT → CONFIG EXIT: CONFIG EXIT from the truth's reading before it to the
    // thread's next window.
    let tail = w.tail.expect("tail");
    assert_eq!(tail.start, w.passes[w.passes.len() - 1].exit.unwrap());
    let next = b.next_window(u(&t["thread"]), ce);
    b.check("CONFIG EXIT", id, tail.end, u(&t["config_exit"]), next);
    assert_eq!(w.config_exit, Some(tail.end));
    // Tracked allocations plus the writable module variables the tool walked (the
    // emulator's code object also has a const, a zero-size, an unplaced and a cuid
    // variable, all of which the snapshot skips).
    let bytes = w.bytes.expect("byte estimate");
    assert_eq!(
        bytes.classified,
        u(&t["snapshot"]["bytes"]),
        "classified estimate for dispatch {id}"
    );
    assert_eq!(
        u64::from(bytes.classified_regions),
        u(&t["snapshot"]["regions"]),
        "classified regions for dispatch {id}"
    );
    assert!(bytes.upper_bound >= bytes.classified);
}

/// A fixed loop of `n` passes: one continue decision after every pass but the last, each
/// "continue", and each splitting its gap into continue + restore.
fn check_continues(w: &Window, n: u64) {
    let after: Vec<u32> = w.continues.iter().map(|c| c.after_pass).collect();
    let want: Vec<u32> = (0..n.saturating_sub(1) as u32).collect();
    assert_eq!(
        after, want,
        "continue after passes 0..N-2, never after the last"
    );
    for c in &w.continues {
        assert!(c.result, "a fixed loop always continues");
        assert_eq!(u64::from(c.total), n);
        assert!(c.call.end >= c.call.start);
    }
    for (x, p) in w.restores.iter().zip(w.passes.windows(2)) {
        let c = x.continue_phase.expect("a continue phase in every gap");
        assert_eq!(c.start, p[0].exit.unwrap());
        assert_eq!((c.end, x.end), (x.start, p[1].enter.unwrap()));
    }
}

#[test]
fn drive_mode_matches_truth_for_stream_and_saxpy_all_layouts_and_kinds() {
    let mut windows = 0;
    for wl in ["stream", "saxpy"] {
        for n in [2u64, 4] {
            for layout in ["a", "b"] {
                for kind in ["23", "25", "26"] {
                    let name = format!("drive-{wl}-{n}-{layout}-{kind}");
                    let ns = n.to_string();
                    let r = run(
                        &name,
                        &workload(
                            wl,
                            "4096",
                            "2",
                            &["--payload-layout", layout, "--replay-kind", kind],
                        ),
                        &[("KRPHASE_PASSES", &ns), ("KRPHASE_MODE", "drive")],
                    );
                    windows += check_drive(&r, n);
                    let d = decode(&r.krp());
                    assert_eq!(d.header.replay_kind.to_string(), kind, "kind found by name");
                }
            }
        }
    }
    eprintln!("{windows} windows compared");
}

#[test]
fn payload_without_toggles_and_forced_layout_work() {
    let r = run(
        "drive-c168",
        &workload("saxpy", "4096", "3", &["--payload-layout", "c168"]),
        &[],
    );
    check_drive(&r, 2);
    let r = run(
        "drive-forced-a",
        &workload("stream", "4096", "1", &["--payload-layout", "a"]),
        &[("KRPHASE_PAYLOAD_LAYOUT", "a")],
    );
    check_drive(&r, 2);
}

#[test]
fn wrong_forced_layout_stops_driving_once() {
    let r = run(
        "drive-wrong-layout",
        &workload("stream", "4096", "2", &["--payload-layout", "b"]),
        &[("KRPHASE_PAYLOAD_LAYOUT", "a")],
    );
    r.assert_one_line("driving stopped", "wrong layout");
    assert!(
        r.truth_of("window").is_empty(),
        "nothing replayed through a wrong layout"
    );
    let d = decode(&r.krp());
    assert!(d.windows.iter().all(|w| w.outcome != Outcome::Replayed));
    // The first dispatch's callback was not found; every later one is left alone.
    let stopped = d
        .declines
        .iter()
        .filter(|x| x.reason == DeclineReason::Stopped)
        .count();
    assert_eq!(stopped + 1, d.declines.len(), "{:?}", d.declines);
}

#[test]
fn filter_and_single_pass_declines_match_truth() {
    let r = run(
        "drive-filter",
        &["stream", "--elements", "4096", "--iterations", "2"],
        &[("KRPHASE_KERNEL_FILTER", r"^stream_(copy|triad)\(")],
    );
    check_drive(&r, 2);
    let d = decode(&r.krp());
    let truth: Vec<&Value> = r.truth_of("decline");
    assert!(!truth.is_empty());
    assert_eq!(d.declines.len(), truth.len());
    let want: HashMap<u64, &str> = truth
        .iter()
        .map(|t| (u(&t["dispatch_id"]), t["reason"].as_str().unwrap()))
        .collect();
    for x in &d.declines {
        assert_eq!(x.reason, DeclineReason::OptOut);
        assert_eq!(want.get(&x.dispatch_id).copied(), Some("opt_out"));
        let name = x.kernel_name.as_deref().unwrap();
        assert!(
            !name.contains("stream_copy") && !name.contains("stream_triad"),
            "{name}"
        );
    }
    // Opted-out dispatches still run once: plain dispatches with an enqueue cost.
    assert_eq!(
        d.plains.iter().filter(|p| p.had_config).count(),
        truth.len()
    );
    assert!(
        d.plains
            .iter()
            .all(|p| p.enqueue_cost().is_some() && p.gpu_end.is_some())
    );

    let r = run(
        "drive-passes-1",
        &["saxpy", "--elements", "4096", "--iterations", "3"],
        &[("KRPHASE_PASSES", "1")],
    );
    r.assert_ok();
    let d = decode(&r.krp());
    let truth = r.truth_of("decline");
    assert_eq!(d.declines.len(), truth.len());
    assert!(truth.iter().all(|t| t["reason"] == "pass_count_1"));
    assert!(
        d.declines
            .iter()
            .all(|x| x.reason == DeclineReason::PassCountOne)
    );
    assert!(d.windows.is_empty());
}

#[test]
fn sdk_declines_are_windows_with_outcome_declined() {
    let r = run(
        "drive-sdk-decline",
        &workload("stream", "4096", "1", &["--decline", "footprint_budget"]),
        &[],
    );
    r.assert_ok();
    let d = decode(&r.krp());
    let truth = r.truth_of("window");
    assert!(!truth.is_empty());
    assert!(truth.iter().all(|t| t["outcome"] == "declined"));
    let declined = d.with_outcome(Outcome::Declined);
    assert_eq!(declined.len(), truth.len());
    assert_eq!(d.trailer.unwrap().declines as usize, truth.len());
    for w in declined {
        assert_eq!(w.executed_passes, 0);
        assert_eq!(w.requested_passes, Some(2));
    }
}

#[test]
fn observe_mode_with_the_internal_driver_both_orders() {
    for order in ["first", "last"] {
        let r = run(
            &format!("observe-{order}"),
            &workload(
                "stream",
                "4096",
                "2",
                &["--driver-passes", "3", "--driver-order", order],
            ),
            &[],
        );
        r.assert_ok();
        let d = decode(&r.krp());
        assert_eq!(
            d.header.mode,
            krphase_format::Mode::Observe,
            "auto observes under the driver"
        );
        let truth = r.truth_of("window");
        assert!(!truth.is_empty());
        let by_id = d.by_id();
        for t in &truth {
            let id = u(&t["dispatch_id"]);
            let w = by_id
                .get(&id)
                .unwrap_or_else(|| panic!("{order}: no window for {id}"));
            assert_eq!(w.source, Source::Observe);
            assert_eq!(w.executed_passes, 3);
            // Reader-side estimate: live allocations + module variables at the first pass.
            let b = w.bytes.expect("observe-mode byte estimate");
            assert_eq!(b.classified, u(&t["snapshot"]["bytes"]), "{order}: {id}");
            assert!(b.upper_bound >= b.classified);
            let tp = t["passes"].as_array().unwrap();
            for (p, q) in w.passes.iter().zip(tp) {
                assert_eq!(p.gpu_start, Some(u(&q["gpu_start"])));
                assert_eq!(p.gpu_end, Some(u(&q["gpu_end"])));
            }
            assert_eq!(w.restores.len(), 2);
            // Each observed restore gap contains the truth's restore copy.
            for (x, q) in w.restores.iter().zip(t["restores"].as_array().unwrap()) {
                assert!(
                    x.start <= u(&q["start"]) && u(&q["end"]) <= x.end,
                    "{order}: {x:?} vs {q}"
                );
            }
        }
        assert_eq!(d.windows.len(), truth.len());
    }
}

#[test]
fn drive_mode_falls_back_to_observe_when_replay_is_owned() {
    let r = run(
        "drive-refused",
        &workload(
            "saxpy",
            "4096",
            "2",
            &["--driver-passes", "3", "--driver-order", "first"],
        ),
        &[("KRPHASE_MODE", "drive")],
    );
    r.assert_one_line("status 15", "replay owned");
    let d = decode(&r.krp());
    assert!(
        d.notices
            .contains(&krphase_format::event::Notice::FellBackToObserve)
    );
    assert_eq!(d.windows.len(), r.truth_of("window").len());
    assert!(
        d.windows
            .iter()
            .all(|w| w.source == Source::Observe && w.executed_passes == 3)
    );
}

/// 64 host threads, one queue each, 1000 dispatches each: 64,000 dispatches.
const SIXTY_FOUR_THREADS: [&str; 7] = [
    "multi-queue",
    "--threads",
    "64",
    "--iterations",
    "1000",
    "--elements",
    "64",
];

#[test]
fn sixty_four_threads_thousand_dispatches_counts_exact() {
    for on_full in ["block", "drop"] {
        // The default wait budget: a writer starved of CPU on a loaded machine may spend it, and
        // from then on records are dropped. The counts hold either way: the tool counts every
        // CONFIG pair as it happens, and every record is written or counted as dropped.
        let r = run(
            &format!("threads-{on_full}"),
            &SIXTY_FOUR_THREADS,
            &[("KRPHASE_PASSES", "1"), ("KRPHASE_ON_FULL", on_full)],
        );
        r.assert_ok();
        let result = r.truth_of("result");
        let dispatches = u(&result[0]["dispatches"]);
        assert_eq!(dispatches, 64_000);
        let d = decode(&r.krp());
        assert!(!d.truncated);
        let t = d.trailer.expect("trailer");
        assert_eq!(t.events_written, d.records, "trailer counts every record");
        assert_eq!(t.declines, dispatches, "the tool counted every CONFIG pair");
        // Window records are dropped only once a wait budget is spent: the run's (STALLED,
        // said on stderr) or finalize's (UNFLUSHED).
        let spent = t.flags & (flags::STALLED | flags::UNFLUSHED) != 0;
        eprintln!(
            "{on_full}: declines decoded={} dropped_window={} flags={:#x}",
            d.declines.len(),
            t.dropped_window,
            t.flags
        );
        if t.flags & flags::STALLED != 0 {
            assert!(r.stderr().contains("is not keeping up"), "{}", r.stderr());
        }
        if !spent {
            assert_eq!(
                t.dropped_window, 0,
                "window records drop only once a budget is spent"
            );
        }
        let ids: std::collections::HashSet<u64> =
            d.declines.iter().map(|x| x.dispatch_id).collect();
        assert_eq!(ids.len(), d.declines.len(), "no CONFIG pair twice");
        // Every CONFIG pair is decoded, or a record of it was dropped and counted.
        let decoded = d.declines.len() as u64;
        assert!(decoded <= dispatches);
        assert!(
            dispatches - decoded <= t.dropped_window,
            "{} CONFIG pairs lost, {} window records counted as dropped",
            dispatches - decoded,
            t.dropped_window
        );
        check_plain_counts(&d, &t, on_full, dispatches, spent);
    }
}

/// The dispatches' own records: every dispatch complete, or one of its records (3 each) dropped
/// and counted. Under `block` a dispatch record waits out the budget before it is dropped.
fn check_plain_counts(d: &Decoded, t: &Trailer, on_full: &str, dispatches: u64, spent: bool) {
    let plain_complete = d
        .plains
        .iter()
        .filter(|p| p.gpu_end.is_some() && p.enqueue_enter.is_some())
        .count() as u64;
    eprintln!(
        "{on_full}: plain={} complete={plain_complete} dropped_dispatch={}",
        d.plains.len(),
        t.dropped_dispatch
    );
    if on_full == "block" && !spent {
        assert_eq!(t.dropped_dispatch, 0);
    }
    assert!(plain_complete <= dispatches);
    assert!(plain_complete + t.dropped_dispatch >= dispatches);
}

#[test]
fn sigkill_halfway_leaves_a_readable_file() {
    let a = artifacts();
    let dir = scratch_dir("sigkill");
    let krp = dir.join("k.krp");
    let mut child = Command::new(&a.emu)
        .args([
            "run",
            "stream",
            "--elements",
            "4096",
            "--iterations",
            "100000",
        ])
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &krp)
        .env_remove("KRPHASE_MODE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    // Windows are flushed at CONFIG EXIT: wait until some blocks are on disk.
    let start = std::time::Instant::now();
    while std::fs::metadata(&krp).map(|m| m.len()).unwrap_or(0) < 64 * 1024 {
        assert!(start.elapsed().as_secs() < 60, "file never grew");
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the emulator ended early"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    let st = child.wait().expect("reap");
    assert!(!st.success());
    let d = decode(&krp);
    assert!(d.trailer.is_none(), "no trailer after SIGKILL");
    assert!(d.with_outcome(Outcome::Replayed).len() > 10);
}

#[test]
fn bad_environment_and_unwritable_path_decline_with_one_line() {
    for (name, var, value, what) in [
        ("bad-passes", "KRPHASE_PASSES", "zero", "KRPHASE_PASSES"),
        ("bad-mode", "KRPHASE_MODE", "sideways", "KRPHASE_MODE"),
        (
            "bad-filter",
            "KRPHASE_KERNEL_FILTER",
            "([",
            "KRPHASE_KERNEL_FILTER",
        ),
        ("disabled", "KRPHASE_DISABLE", "1", "KRPHASE_DISABLE"),
        (
            "unwritable",
            "KRPHASE_OUTPUT",
            "/proc/krphase-no/such.krp",
            "/proc/krphase-no",
        ),
        (
            "bad-template",
            "KRPHASE_OUTPUT",
            "%env{KRPHASE_NO_SUCH_VAR}%.krp",
            "KRPHASE_NO_SUCH_VAR",
        ),
    ] {
        let r = run(
            name,
            &["saxpy", "--elements", "1024", "--iterations", "2"],
            &[(var, value)],
        );
        r.assert_one_line(what, name);
        assert!(r.krp_files().is_empty(), "{name}: no file");
    }
}

#[test]
fn other_workloads_match_truth_counts() {
    for (wl, extra) in [
        ("queue-depth", vec!["--depth", "4"]),
        ("multi-queue", vec!["--threads", "4"]),
        ("graph", vec![]),
        ("multi-packet", vec![]),
        ("vmem", vec![]),
    ] {
        let mut args = vec![wl, "--elements", "1024", "--iterations", "5"];
        args.extend(extra);
        let r = run(&format!("workload-{wl}"), &args, &[]);
        r.assert_ok();
        let d = decode(&r.krp());
        let t = r.truth_of("window");
        let replayed = t.iter().filter(|w| w["outcome"] == "replayed").count();
        let declined = t.len() - replayed;
        let tool_replayed = d.with_outcome(Outcome::Replayed);
        assert_eq!(tool_replayed.len(), replayed, "{wl}: replayed windows");
        assert_eq!(
            d.windows.len() - tool_replayed.len(),
            declined,
            "{wl}: SDK-declined windows"
        );
        let passes: HashMap<u64, u64> = t
            .iter()
            .map(|w| (u(&w["dispatch_id"]), u(&w["executed_passes"])))
            .collect();
        for w in &tool_replayed {
            assert_eq!(
                Some(&w.executed_passes),
                passes.get(&w.dispatch_id),
                "{wl}: passes of {}",
                w.dispatch_id
            );
            assert!(
                w.passes.iter().all(|p| p.gpu_end.is_some()),
                "{wl}: GPU times"
            );
        }
        // Not-eligible dispatches (graph, multi-packet) get no CONFIG: plain dispatches only.
        let not_eligible = r
            .truth_of("decline")
            .iter()
            .filter(|x| x["config"] == false)
            .count();
        let plain_no_config = d.plains.iter().filter(|p| !p.had_config).count();
        assert_eq!(
            plain_no_config, not_eligible,
            "{wl}: dispatches without CONFIG"
        );
        assert_eq!(
            u(&r.truth_of("result")[0]["dispatches"]) as usize,
            replayed + d.plains.len(),
            "{wl}: every dispatch once"
        );
    }
}

#[test]
fn under_the_rocprofv3_stand_in_the_tool_observes_into_its_output_directory() {
    let a = artifacts();
    let dir = scratch_dir("rocprofv3");
    let out = dir.join("rp");
    let truth = dir.join("truth.jsonl");
    let o = Command::new(&a.emu)
        .current_dir(&dir)
        .args([
            "rocprofv3",
            "--pmc",
            "SQ_WAVES",
            "--pmc",
            "GRBM_COUNT",
            "--replay-mode",
            "kernel",
        ])
        .args(["--kernel-replay-beta-enabled", "-d"])
        .arg(&out)
        .arg("--")
        .arg(&a.emu)
        .args(["run", "saxpy", "--elements", "4096", "--iterations", "3"])
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env_remove("KRPHASE_OUTPUT")
        .env_remove("KRPHASE_MODE")
        .output()
        .expect("run the rocprofv3 stand-in");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        !stderr
            .lines()
            .any(|l| l.starts_with("[krphase]") && !l.starts_with(WROTE)),
        "{stderr}"
    );
    let found: Vec<PathBuf> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "krp"))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one file under the rocprofv3 output directory: {found:?}"
    );
    let d = decode(&found[0]);
    assert_eq!(d.header.mode, krphase_format::Mode::Observe);
    let t: Vec<Value> = read_truth_if_any(&truth)
        .into_iter()
        .filter(|v| v["type"] == "window")
        .collect();
    assert!(!t.is_empty());
    assert_eq!(d.windows.len(), t.len());
    assert!(
        d.windows.iter().all(|w| w.executed_passes == 2),
        "one pass per counter group"
    );
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                v.extend(walk(&path));
            } else {
                v.push(path);
            }
        }
    }
    v
}

#[test]
fn sixty_four_threads_thousand_replayed_dispatches_drive_mode() {
    let a = artifacts();
    let dir = scratch_dir("threads-drive");
    let truth = dir.join("truth.jsonl");
    let o = Command::new(&a.emu)
        .arg("run")
        .args(SIXTY_FOUR_THREADS)
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_EMU_TRUTH", &truth)
        .env("KRPHASE_OUTPUT", dir.join("d.krp"))
        .env("KRPHASE_MODE", "drive")
        .env_remove("KRPHASE_PASSES")
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Count truth windows without parsing 64,000 large JSON lines.
    let text = std::fs::read_to_string(&truth).expect("truth");
    let truth_windows = text
        .lines()
        .filter(|l| l.contains("\"type\":\"window\"") && l.contains("\"outcome\":\"replayed\""))
        .count();
    assert_eq!(truth_windows, 64_000);
    let d = decode(&dir.join("d.krp"));
    let t = d.trailer.expect("trailer");
    assert_eq!(t.dropped_window, 0);
    assert_eq!(t.windows, 64_000);
    let replayed = d.with_outcome(Outcome::Replayed);
    assert_eq!(replayed.len(), 64_000);
    assert!(
        replayed
            .iter()
            .all(|w| w.executed_passes == 2 && w.restores.len() == 1 && w.pre_pass.is_some())
    );
    let threads: std::collections::HashSet<u32> = replayed.iter().map(|w| w.thread).collect();
    assert_eq!(threads.len(), 64);
    eprintln!(
        "dropped dispatch records: {} (complete GPU times on {} windows)",
        t.dropped_dispatch,
        replayed
            .iter()
            .filter(|w| w.passes.iter().all(|p| p.gpu_end.is_some()))
            .count()
    );
}

/// The restore the tool measures (continue return → next PASS ENTER) holds the truth's restore
/// copy (host order: between the continue return and the next PASS ENTER), and the continue
/// phase before it lies between the truth's PASS EXIT and the copy's start.
fn check_restores_hold_the_copies(r: &Run) {
    let d = decode(&r.krp());
    let slack = slack(&d.header);
    let by_id = d.by_id();
    for t in r.truth_of("window") {
        let w = by_id[&u(&t["dispatch_id"])];
        for (x, q) in w.restores.iter().zip(t["restores"].as_array().unwrap()) {
            let (start, end) = (u(&q["start"]), u(&q["end"]));
            assert!(
                x.start <= start + slack && end <= x.end + slack,
                "{x:?} does not hold the truth's copy [{start}, {end}] (slack {slack} ns)"
            );
            // The continue call returned before the copy began.
            let c = x.continue_phase.expect("a continue phase in every gap");
            let exit = u(&t["passes"][u(&q["after_pass"]) as usize]["exit"]);
            assert!(c.start + slack >= exit, "{c:?} starts before PASS EXIT");
            assert!(c.end <= start + slack, "{c:?} ends after the restore began");
        }
    }
}

#[test]
fn continue_decisions_are_recorded_and_split_each_gap_for_n_2_and_4() {
    for n in [2u64, 4] {
        for layout in ["a", "b"] {
            let ns = n.to_string();
            let r = run(
                &format!("continue-{n}-{layout}"),
                &workload("stream", "65536", "6", &["--payload-layout", layout]),
                &[("KRPHASE_PASSES", &ns), ("KRPHASE_MODE", "drive")],
            );
            // check_drive asserts N-1 continue records per window, none after the last pass.
            check_drive(&r, n);
            check_restores_hold_the_copies(&r);
        }
    }
}

#[test]
fn indefinite_loop_runs_max_passes_per_window() {
    for layout in ["a", "b"] {
        let r = run(
            &format!("indefinite-{layout}"),
            &workload("stream", "4096", "2", &["--payload-layout", layout]),
            &[
                ("KRPHASE_PASSES", "0"),
                ("KRPHASE_MAX_PASSES", "3"),
                ("KRPHASE_MODE", "drive"),
            ],
        );
        r.assert_quiet_ok();
        let truth = r.truth_of("window");
        assert!(!truth.is_empty());
        for t in &truth {
            assert_eq!(t["outcome"], "replayed");
            assert_eq!(u(&t["requested_passes"]), 0, "an indefinite loop");
            assert_eq!(u(&t["executed_passes"]), 3);
        }
        let d = decode(&r.krp());
        assert_eq!(d.header.passes, 0);
        assert!(
            d.notices
                .contains(&krphase_format::event::Notice::LayoutConfirmed),
            "the layout is confirmed at the second pass: {:?}",
            d.notices
        );
        let replayed = d.with_outcome(Outcome::Replayed);
        assert_eq!(replayed.len(), truth.len());
        for w in replayed {
            assert_eq!(w.requested_passes, Some(0));
            assert_eq!(w.executed_passes, 3);
            assert_eq!(w.restores.len(), 2);
            let calls: Vec<(u32, u32, bool)> = w
                .continues
                .iter()
                .map(|c| (c.after_pass, c.total, c.result))
                .collect();
            assert_eq!(calls, [(0, 0, true), (1, 0, true), (2, 0, false)]);
            assert!(w.restores.iter().all(|x| x.continue_phase.is_some()));
        }
    }
}

#[test]
fn bad_max_passes_declines_with_one_line() {
    for v in ["0", "lots"] {
        let r = run(
            &format!("bad-max-passes-{v}"),
            &["saxpy", "--elements", "4096", "--iterations", "1"],
            &[("KRPHASE_PASSES", "0"), ("KRPHASE_MAX_PASSES", v)],
        );
        r.assert_one_line("KRPHASE_MAX_PASSES", v);
        assert!(r.krp_files().is_empty());
    }
}

/// `pass_drain_stuck` (the SDK abandons a pass whose drain never ends): PASS ENTER of the stuck
/// pass without PASS EXIT. Each window is kept, declined, with the stuck pass incomplete and only
/// completed passes counted; the stuck kernel's late completion does not become a stray dispatch.
#[test]
fn a_stuck_pass_without_pass_exit_is_an_incomplete_pass_of_a_declined_window() {
    for (stuck_pass, windows) in [("1", "2"), ("0", "1")] {
        let r = run(
            &format!("stuck-pass-{stuck_pass}"),
            &workload(
                "stream",
                "4096",
                "1",
                &[
                    "--decline",
                    "pass_drain_stuck",
                    "--stuck-pass",
                    stuck_pass,
                    "--stuck-windows",
                    windows,
                    "--drain-timeout-ms",
                    "24",
                ],
            ),
            &[("KRPHASE_PASSES", "3"), ("KRPHASE_MODE", "drive")],
        );
        r.assert_quiet_ok();
        let d = decode(&r.krp());
        let truth = r.truth_of("window");
        assert_eq!(d.windows.len(), truth.len(), "every window kept");
        let by_id = d.by_id();
        let mut stuck_seen = 0;
        for t in &truth {
            let id = u(&t["dispatch_id"]);
            let w = by_id[&id];
            let tp = t["passes"].as_array().unwrap();
            assert_eq!(w.passes.len(), tp.len(), "dispatch {id}");
            assert_eq!(w.executed_passes, u(&t["executed_passes"]), "dispatch {id}");
            assert_eq!(w.restores.len(), t["restores"].as_array().unwrap().len());
            assert_eq!(w.requested_passes, Some(3));
            for (p, q) in w.passes.iter().zip(tp) {
                assert_eq!(p.incomplete, q["exit"].is_null(), "dispatch {id}");
                if !q["gpu_start"].is_null() {
                    assert_eq!(p.gpu_start, Some(u(&q["gpu_start"])));
                }
            }
            if t["reason"] == "pass_drain_stuck" {
                stuck_seen += 1;
                assert_eq!(t["outcome"], "declined");
                assert_eq!(w.outcome, Outcome::Declined);
                let k = tp.len() - 1;
                assert_eq!(w.executed_passes, k as u64);
                assert!(w.tail.is_none());
                let s = w.stuck.expect("stuck interval");
                assert_eq!(Some(s.start), w.passes[k].enter);
                assert_eq!(Some(s.end), w.config_exit);
                assert!(s.start >= u(&tp[k]["enter"]) && s.end >= u(&t["config_exit"]));
                // Continue is asked after every completed pass, never for the stuck one.
                let after: Vec<u32> = w.continues.iter().map(|c| c.after_pass).collect();
                assert_eq!(after, (0..k as u32).collect::<Vec<_>>());
            } else {
                assert_eq!(w.outcome, Outcome::Replayed);
                assert_eq!(w.executed_passes, 3);
                check_continues(w, 3);
            }
        }
        assert_eq!(stuck_seen, windows.parse::<usize>().unwrap());
        assert!(
            d.plains.iter().all(|p| !by_id.contains_key(&p.dispatch_id)),
            "a late completion of a stuck pass is not a separate dispatch"
        );
        assert_eq!(d.trailer.unwrap().windows as usize, truth.len());
    }
}

/// At finalize the tool says where the file went and what it holds (the trailer's counts); a
/// misspelt `KRPHASE_*` variable gets one warning naming the closest known one, and changes
/// nothing else.
#[test]
fn the_tool_says_what_it_wrote_and_names_a_misspelt_variable() {
    let r = run(
        "says-what-it-did",
        &["saxpy", "--elements", "1024", "--iterations", "3"],
        &[("KRPHASE_PASES", "4")],
    );
    r.assert_one_line(
        "KRPHASE_PASES is not a krphase variable (ignored); did you mean KRPHASE_PASSES?",
        "misspelt",
    );
    let krp = r.krp();
    let d = decode(&krp);
    let t = d.trailer.expect("trailer");
    let lines = r.written_lines();
    let expected = format!(
        "{WROTE}{}: {} windows, {} declines, {} events, {} dropped",
        krp.display(),
        t.windows,
        t.declines,
        t.events_written,
        t.dropped_dispatch + t.dropped_allocation + t.dropped_window
    );
    // Then, when the application waited on the output at all (configure's wait for the open),
    // how long, as the trailer says.
    let waited = format!(
        "; the application waited {:.1} ms on the output",
        t.stall_ns as f64 / 1e6
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0] == expected || lines[0] == format!("{expected}{waited}"),
        "{lines:?}\nexpected {expected}[{waited}]"
    );
    // The misspelling was ignored: the default 2 passes, 3 windows.
    assert_eq!((t.windows, d.windows[0].executed_passes), (3, 2));
}

/// Newer headers' 160-byte kernel-dispatch callback data (`pipe_id` appended): the tool reads
/// the 152-byte prefix, so every window keeps its GPU times and no payload counts as bad; the
/// same run with the 152-byte data is the control.
#[test]
fn pipe_id_dispatch_records_are_accepted() {
    for size in ["152", "160"] {
        let args = workload("saxpy", "64", "3", &["--dispatch-record", size]);
        let r = run(
            &format!("pipe-id-{size}"),
            &args,
            &[("KRPHASE_PASSES", "3")],
        );
        r.assert_ok();
        let d = decode(&r.krp());
        let replayed = d.with_outcome(Outcome::Replayed);
        assert_eq!(replayed.len(), 3, "{size}: three replayed windows");
        for w in &replayed {
            assert_eq!(w.passes.len(), 3, "{size}: passes");
            assert!(
                w.passes.iter().all(|p| p.gpu_end.is_some()),
                "{size}: every pass has its GPU times from the COMPLETE record"
            );
        }
        let t = d.trailer.expect("a trailer");
        assert_eq!(t.bad_payloads, 0, "{size}: no payload was refused");
    }
}

/// A run whose output path exists writes another file, and its finalize line names that file
/// with that file's counts (not the older file's).
#[test]
fn a_second_run_into_the_same_path_names_the_file_it_wrote() {
    let shared = scratch_dir("same-path-files");
    let path = shared.join("run.krp");
    let p = path.to_str().expect("UTF-8 path");
    let args = |n| ["saxpy", "--elements", "1024", "--iterations", n];
    let first = run("same-path-1", &args("3"), &[("KRPHASE_OUTPUT", p)]);
    assert!(first.out.status.success(), "{}", first.stderr());
    let second = run("same-path-2", &args("1"), &[("KRPHASE_OUTPUT", p)]);
    assert!(second.out.status.success(), "{}", second.stderr());
    let used = shared.join("run-1.krp");
    let lines = second.written_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let want = format!("{WROTE}{}: 1 windows,", used.display());
    assert!(lines[0].starts_with(&want), "{lines:?}");
}

/// The emulated SDK's rule options: `replay_continue`'s `user_data` contract and what a pass
/// count of 1 means.
fn sdk_rules(contract: &'static str, one: &'static str) -> [&'static str; 4] {
    ["--continue-user-data", contract, "--pass-count-one", one]
}

/// `KRPHASE_PASSES=1` (drive) or a driver asking for 1 pass (observe), per the SDK's rule: no
/// window at all and one `pass_count_1` decline per dispatch the tool drove (no-replay), or one
/// window of one pass and no restore per truth window (one-pass). An observer cannot tell a
/// replay of one pass from a plain run (one enqueue, one completion, no CONFIG): it records a
/// plain dispatch with the pass's GPU times.
fn check_one_pass(r: &Run, one: &str, source: Source) {
    r.assert_ok();
    let d = decode(&r.krp());
    let truth = r.truth_of("window");
    if one == "no-replay" {
        assert!(truth.is_empty() && d.windows.is_empty(), "{one}: no window");
        if source == Source::Drive {
            let declines = r.truth_of("decline");
            assert!(!declines.is_empty());
            assert!(declines.iter().all(|t| t["reason"] == "pass_count_1"));
            assert_eq!(d.declines.len(), declines.len());
            assert!(
                d.declines
                    .iter()
                    .all(|x| x.reason == DeclineReason::PassCountOne)
            );
        }
        return;
    }
    assert!(!truth.is_empty());
    assert!(d.declines.is_empty(), "{one}: {:?}", d.declines);
    if source == Source::Observe {
        assert!(d.windows.is_empty());
        let plain: HashMap<u64, &PlainDispatch> =
            d.plains.iter().map(|p| (p.dispatch_id, p)).collect();
        for t in &truth {
            let p = plain[&u(&t["dispatch_id"])];
            assert_eq!(p.gpu_start, Some(u(&t["passes"][0]["gpu_start"])));
        }
        return;
    }
    let by_id = d.by_id();
    for t in &truth {
        assert_eq!(
            (u(&t["requested_passes"]), u(&t["executed_passes"])),
            (1, 1)
        );
        let w = by_id[&u(&t["dispatch_id"])];
        assert_eq!((w.source, w.outcome), (source, Outcome::Replayed));
        assert_eq!(w.executed_passes, 1);
        assert!(w.restores.is_empty() && w.continues.is_empty());
        let q = &t["passes"][0];
        assert_eq!(w.passes[0].gpu_start, Some(u(&q["gpu_start"])));
        assert_eq!(w.passes[0].gpu_end, Some(u(&q["gpu_end"])));
    }
    assert_eq!(d.windows.len(), truth.len());
}

/// An indefinite loop (`KRPHASE_PASSES=0`, 3 passes): every window runs 3 passes, and the
/// tool's continue decisions are recorded whichever `user_data` the SDK hands it.
fn check_indefinite(r: &Run) {
    r.assert_quiet_ok();
    let d = decode(&r.krp());
    let truth = r.truth_of("window");
    assert!(!truth.is_empty());
    assert!(truth.iter().all(|t| u(&t["executed_passes"]) == 3));
    let replayed = d.with_outcome(Outcome::Replayed);
    assert_eq!(replayed.len(), truth.len());
    for w in replayed {
        let calls: Vec<bool> = w.continues.iter().map(|c| c.result).collect();
        assert_eq!(calls, [true, true, false]);
    }
}

/// Both `user_data` contracts × both pass-count-1 rules: drive mode (2 passes, an indefinite
/// loop, 1 pass) and observe mode under the rocprofv3-like driver (3 passes, 1 pass) match the
/// truth in every combination.
#[test]
fn every_sdk_rule_combination_drive_and_observe() {
    let drive = |n: &'static str| [("KRPHASE_PASSES", n), ("KRPHASE_MODE", "drive")];
    for contract in ["pass", "config"] {
        for one in ["no-replay", "one-pass"] {
            let rules = sdk_rules(contract, one);
            let tag = format!("{contract}-{one}");
            let r = run(
                &format!("rules-drive-2-{tag}"),
                &workload("saxpy", "4096", "3", &rules),
                &drive("2"),
            );
            check_drive(&r, 2);
            let r = run(
                &format!("rules-drive-0-{tag}"),
                &workload("stream", "4096", "1", &rules),
                &[
                    ("KRPHASE_PASSES", "0"),
                    ("KRPHASE_MAX_PASSES", "3"),
                    ("KRPHASE_MODE", "drive"),
                ],
            );
            check_indefinite(&r);
            let r = run(
                &format!("rules-drive-1-{tag}"),
                &workload("saxpy", "4096", "3", &rules),
                &drive("1"),
            );
            check_one_pass(&r, one, Source::Drive);
            for passes in ["3", "1"] {
                let mut args = workload("stream", "4096", "1", &rules).to_vec();
                args.extend_from_slice(&["--driver-passes", passes]);
                let r = run(&format!("rules-observe-{passes}-{tag}"), &args, &[]);
                if passes == "1" {
                    check_one_pass(&r, one, Source::Observe);
                    continue;
                }
                r.assert_ok();
                let d = decode(&r.krp());
                let truth = r.truth_of("window");
                assert!(!truth.is_empty());
                assert_eq!(d.windows.len(), truth.len(), "{tag}");
                assert!(d.windows.iter().all(|w| w.executed_passes == 3));
            }
        }
    }
}
