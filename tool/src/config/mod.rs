//! The tool's environment (the `KRPHASE_*` variables and the two rocprofv3 ones it reads),
//! parsed once at configure time. Every bad value is one clear message naming the variable; the
//! tool then declines and the application runs on.
//!
//! On the data's path this is the step before any record: the settings every later step reads
//! (mode, passes, kernel filter, output template, wait budget), fixed for the run. `pmc` parses
//! `KRPHASE_PMC` into counter groups and the pass count they need.

pub mod kernel_filter;
pub mod pass_plan;
pub mod pmc;

use krphase_ffi::PayloadLayout;
use krphase_format::Mode;
use krphase_names::KernelFilter;
use std::time::Duration;

/// What to do when the writer falls behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFull {
    /// Drop (and count) dispatch and allocation events; replay-window events are never dropped.
    Drop,
    /// Wait for the writer.
    Block,
}

/// The largest `KRPHASE_PASSES` (and `KRPHASE_MAX_PASSES`) accepted.
pub const MAX_PASSES: u32 = 4096;

/// `KRPHASE_PASSES` default.
pub const DEFAULT_PASSES: u32 = 2;

/// `KRPHASE_MAX_PASSES` default: passes an indefinite loop (`KRPHASE_PASSES=0`) runs.
pub const DEFAULT_MAX_PASSES: u32 = 2;

/// The largest wait-budget cap accepted, in ms (a cap is a promise to the application: beyond
/// a few seconds it promises nothing).
pub const MAX_WAIT_MS: u64 = 10_000;

#[derive(Debug, Clone)]
pub struct Config {
    pub requested_mode: Mode,
    /// N returned by the pass-count callback; 0 = an indefinite loop ended by the continue
    /// callback after `max_passes` passes.
    pub passes: u32,
    /// Passes an indefinite loop runs (`KRPHASE_MAX_PASSES`, >= 1).
    pub max_passes: u32,
    /// Which kernels drive mode replays (`kernel_filter.rs`); `None`: every kernel.
    pub filter: Option<KernelFilter>,
    pub layout: Option<PayloadLayout>,
    pub on_full: OnFull,
    pub output_template: Option<String>,
    /// `ROCPROF_KERNEL_REPLAY` is set: rocprofv3 owns replay (auto picks observe).
    pub rocprof_replay: bool,
    /// The loaded path of rocprofv3's tool library when it is in the process (auto picks
    /// observe: its replay claim is fatal when refused). Set by the tool at configure time
    /// (`krphase_ffi::loaded_objects`), never from the environment.
    pub rocprof_tool: Option<String>,
    /// `ROCPROF_OUTPUT_PATH`, the default output directory under rocprofv3.
    pub rocprof_output: Option<String>,
    /// `KRPHASE_PMC`'s counter groups, one per pass (drive mode), when valid.
    pub pmc: Option<Vec<Vec<String>>>,
    /// Why a `KRPHASE_PMC` value was set aside (the tool runs without counters).
    pub pmc_warning: Option<String>,
    /// `KRPHASE_PMC_REFERENCE`'s counters, already in every group of `pmc`.
    pub reference: Vec<String>,
    /// Which pass is the warm-up or the verification and which group each counts.
    pub plan: pass_plan::PassPlan,
    /// The wait budget's caps (`KRPHASE_WAIT_BUDGET_MS`, `KRPHASE_THREAD_WAIT_BUDGET_MS`).
    pub wait: Caps,
    /// `KRPHASE_CLOCK=boottime`: time with `clock_gettime` even where the TSC is usable.
    pub force_boottime: bool,
}

impl Config {
    /// The mode auto resolves to.
    pub fn effective_mode(&self) -> Mode {
        match self.requested_mode {
            Mode::Auto if self.rocprof_replay || self.rocprof_tool.is_some() => Mode::Observe,
            Mode::Auto => Mode::Drive,
            m => m,
        }
    }

    pub fn filter_src(&self) -> String {
        kernel_filter::describe(self.filter.as_ref())
    }
}

/// `Ok(None)` when `KRPHASE_DISABLE` asks the tool to stay out.
pub fn from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<Config>, String> {
    let set = |k: &str| get(k).filter(|v| !v.trim().is_empty());
    if let Some(v) = set("KRPHASE_DISABLE") {
        match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => return Ok(None),
            "0" | "false" | "no" | "off" => {}
            _ => return Err(format!("KRPHASE_DISABLE={v:?} is not 0 or 1")),
        }
    }
    let requested_mode = match set("KRPHASE_MODE") {
        None => Mode::Auto,
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "auto" => Mode::Auto,
            "drive" => Mode::Drive,
            "observe" => Mode::Observe,
            _ => return Err(format!("KRPHASE_MODE={v:?} is not auto, drive or observe")),
        },
    };
    let explicit_passes = match set("KRPHASE_PASSES") {
        None => None,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n <= MAX_PASSES => Some(n),
            _ => {
                return Err(format!(
                    "KRPHASE_PASSES={v:?} is not a whole number from 0 (indefinite) to {MAX_PASSES}"
                ));
            }
        },
    };
    let max_passes = match set("KRPHASE_MAX_PASSES") {
        None => DEFAULT_MAX_PASSES,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if (1..=MAX_PASSES).contains(&n) => n,
            _ => {
                return Err(format!(
                    "KRPHASE_MAX_PASSES={v:?} is not a whole number from 1 to {MAX_PASSES}"
                ));
            }
        },
    };
    // A bad KRPHASE_PMC costs the counters, never the phases: the tool runs on without them.
    let counted = pass_plan::resolve(
        &set,
        explicit_passes,
        max_passes,
        (MAX_PASSES, DEFAULT_PASSES),
    )?;
    let filter = kernel_filter::from_env(&set)?;
    let layout = match set("KRPHASE_PAYLOAD_LAYOUT") {
        None => None,
        Some(v) if v.trim().eq_ignore_ascii_case("auto") => None,
        Some(v) => Some(
            PayloadLayout::parse(&v)
                .ok_or_else(|| format!("KRPHASE_PAYLOAD_LAYOUT={v:?} is not a, b or auto"))?,
        ),
    };
    let on_full = match set("KRPHASE_ON_FULL") {
        None => OnFull::Drop,
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "drop" => OnFull::Drop,
            "block" => OnFull::Block,
            _ => return Err(format!("KRPHASE_ON_FULL={v:?} is not drop or block")),
        },
    };
    let wait = wait_caps(&set)?;
    let force_boottime = match set("KRPHASE_CLOCK") {
        None => false,
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "auto" => false,
            "boottime" => true,
            _ => return Err(format!("KRPHASE_CLOCK={v:?} is not auto or boottime")),
        },
    };
    Ok(Some(Config {
        requested_mode,
        passes: counted.passes,
        max_passes: counted.max_passes,
        filter,
        layout,
        on_full,
        output_template: set("KRPHASE_OUTPUT"),
        rocprof_replay: set("ROCPROF_KERNEL_REPLAY").is_some_and(|v| v.trim() != "0"),
        rocprof_tool: None,
        rocprof_output: set("ROCPROF_OUTPUT_PATH"),
        pmc: counted.groups,
        pmc_warning: counted.warning,
        reference: counted.reference,
        plan: counted.plan,
        wait,
        force_boottime,
    }))
}

/// The wait budget's two caps, each a whole number of milliseconds from 1 to [`MAX_WAIT_MS`].
fn wait_caps(set: &dyn Fn(&str) -> Option<String>) -> Result<Caps, String> {
    let ms = |k: &str, default: Duration| match set(k) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if (1..=MAX_WAIT_MS).contains(&n) => Ok(Duration::from_millis(n)),
            _ => Err(format!(
                "{k}={v:?} is not a whole number of milliseconds from 1 to {MAX_WAIT_MS}"
            )),
        },
    };
    Ok(Caps {
        process: ms("KRPHASE_WAIT_BUDGET_MS", DEFAULT_PROCESS)?,
        thread: ms("KRPHASE_THREAD_WAIT_BUDGET_MS", DEFAULT_THREAD)?,
    })
}

/// Default process cap of the wait budget: every application thread together, for the whole
/// run (finalize included).
pub const DEFAULT_PROCESS: Duration = Duration::from_millis(50);
/// Default per-thread cap: one application thread's waits over the run (finalize excluded).
pub const DEFAULT_THREAD: Duration = Duration::from_millis(25);

/// The wait budget's two caps (the recorder enforces them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub process: Duration,
    pub thread: Duration,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            process: DEFAULT_PROCESS,
            thread: DEFAULT_THREAD,
        }
    }
}

/// Every `KRPHASE_*` variable the tool reads.
pub const KNOWN: &[&str] = &[
    "KRPHASE_DISABLE",
    "KRPHASE_MODE",
    "KRPHASE_PASSES",
    "KRPHASE_MAX_PASSES",
    "KRPHASE_KERNEL_FILTER",
    "KRPHASE_KERNEL_EXCLUDE",
    "KRPHASE_TRUNCATE_KERNELS",
    "KRPHASE_MANGLED_KERNELS",
    "KRPHASE_PAYLOAD_LAYOUT",
    "KRPHASE_ON_FULL",
    "KRPHASE_OUTPUT",
    "KRPHASE_PMC",
    "KRPHASE_PMC_REFERENCE",
    "KRPHASE_WARMUP_PASS",
    "KRPHASE_VERIFY_PASS",
    "KRPHASE_WAIT_BUDGET_MS",
    "KRPHASE_THREAD_WAIT_BUDGET_MS",
    "KRPHASE_CLOCK",
];

/// Prefixes of `KRPHASE_*` variables other krphase programs read (the emulator, the benchmarks)
/// and the tests' switches (golden files, the test command's build scope): known, not the tool's.
const OTHERS: &[&str] = &[
    "KRPHASE_EMU_",
    "KRPHASE_BENCH_",
    "KRPHASE_BLESS",
    "KRPHASE_TEST_SCOPE",
];

/// Each `KRPHASE_*` name in `names` that nobody reads, with the closest known variable, sorted
/// by name (`krphase doctor` reports the same names the tool warns about).
pub fn unknown_with_nearest<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(&'a str, &'static str)> {
    let mut out: Vec<(&str, &'static str)> = names
        .into_iter()
        .filter(|n| n.starts_with("KRPHASE_") && !KNOWN.contains(n))
        .filter(|n| !OTHERS.iter().any(|p| n.starts_with(p)))
        .map(|n| {
            let closest = KNOWN
                .iter()
                .min_by_key(|k| strsim::levenshtein(n, k))
                .expect("KNOWN is not empty");
            (n, *closest)
        })
        .collect();
    out.sort();
    out
}

/// One warning per `KRPHASE_*` variable in `names` that nobody reads (a misspelling is otherwise
/// silently ignored), naming the closest known variable.
pub fn unknown_variables<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    unknown_with_nearest(names)
        .into_iter()
        .map(|(n, closest)| {
            format!("{n} is not a krphase variable (ignored); did you mean {closest}?")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> Result<Option<Config>, String> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_env(&|k| m.get(k).cloned())
    }

    #[test]
    fn unknown_variables_name_the_closest_known_one() {
        let w = unknown_variables([
            "KRPHASE_PASES",
            "KRPHASE_PASSES",
            "KRPHASE_OUTPT",
            "KRPHASE_EMU_TRUTH",
            "KRPHASE_BENCH_QUICK",
            "PATH",
        ]);
        assert_eq!(
            w,
            vec![
                "KRPHASE_OUTPT is not a krphase variable (ignored); did you mean KRPHASE_OUTPUT?",
                "KRPHASE_PASES is not a krphase variable (ignored); did you mean KRPHASE_PASSES?",
            ]
        );
        assert!(unknown_variables(KNOWN.iter().copied()).is_empty());
    }

    #[test]
    fn defaults() {
        let c = parse(&[]).unwrap().unwrap();
        assert_eq!(c.passes, 2);
        assert_eq!(c.max_passes, DEFAULT_MAX_PASSES);
        assert_eq!(c.effective_mode(), Mode::Drive);
        assert_eq!(c.on_full, OnFull::Drop);
        assert!(c.filter.is_none() && c.layout.is_none());
        assert_eq!(c.wait, Caps::default());
        let c = parse(&[
            ("KRPHASE_WAIT_BUDGET_MS", " 200 "),
            ("KRPHASE_THREAD_WAIT_BUDGET_MS", "40"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            c.wait,
            Caps {
                process: Duration::from_millis(200),
                thread: Duration::from_millis(40)
            }
        );
    }

    #[test]
    fn auto_observes_when_rocprofv3_s_tool_is_loaded() {
        let mut c = parse(&[]).unwrap().unwrap();
        c.rocprof_tool = Some("/r/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so".into());
        assert_eq!(c.effective_mode(), Mode::Observe);
        c.requested_mode = Mode::Drive;
        assert_eq!(c.effective_mode(), Mode::Drive, "an explicit mode wins");
    }

    #[test]
    fn auto_observes_under_rocprofv3_replay() {
        let c = parse(&[("ROCPROF_KERNEL_REPLAY", "1")]).unwrap().unwrap();
        assert_eq!(c.effective_mode(), Mode::Observe);
        let c = parse(&[("ROCPROF_KERNEL_REPLAY", "1"), ("KRPHASE_MODE", "drive")])
            .unwrap()
            .unwrap();
        assert_eq!(c.effective_mode(), Mode::Drive);
    }

    #[test]
    fn disable_and_bad_values_name_the_variable() {
        assert!(parse(&[("KRPHASE_DISABLE", "1")]).unwrap().is_none());
        for (k, v) in [
            ("KRPHASE_DISABLE", "maybe"),
            ("KRPHASE_MODE", "fast"),
            ("KRPHASE_PASSES", "-1"),
            ("KRPHASE_PASSES", "two"),
            ("KRPHASE_PASSES", "4097"),
            ("KRPHASE_MAX_PASSES", "0"),
            ("KRPHASE_MAX_PASSES", "many"),
            ("KRPHASE_MAX_PASSES", "5000"),
            ("KRPHASE_KERNEL_FILTER", "(unclosed"),
            ("KRPHASE_PAYLOAD_LAYOUT", "z"),
            ("KRPHASE_ON_FULL", "explode"),
            ("KRPHASE_WAIT_BUDGET_MS", "0"),
            ("KRPHASE_WAIT_BUDGET_MS", "50ms"),
            ("KRPHASE_WAIT_BUDGET_MS", "10001"),
            ("KRPHASE_THREAD_WAIT_BUDGET_MS", "-5"),
            ("KRPHASE_THREAD_WAIT_BUDGET_MS", "2.5"),
        ] {
            let e = parse(&[(k, v)]).expect_err(k);
            assert!(e.starts_with(k), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn indefinite_loop_and_its_bound() {
        let c = parse(&[("KRPHASE_PASSES", "0"), ("KRPHASE_MAX_PASSES", "3")])
            .unwrap()
            .unwrap();
        assert_eq!((c.passes, c.max_passes), (0, 3));
        let c = parse(&[("KRPHASE_PASSES", "0")]).unwrap().unwrap();
        assert_eq!((c.passes, c.max_passes), (0, DEFAULT_MAX_PASSES));
    }

    #[test]
    fn pmc_sets_the_pass_count_and_a_bad_value_only_costs_the_counters() {
        let c = parse(&[("KRPHASE_PMC", "A B;C;D")]).unwrap().unwrap();
        assert_eq!((c.passes, c.pmc.as_ref().map(Vec::len)), (3, Some(3)));
        assert!(c.pmc_warning.is_none());
        let c = parse(&[("KRPHASE_PMC", "A;;C"), ("KRPHASE_PASSES", "4")])
            .unwrap()
            .unwrap();
        assert!(c.pmc.is_none() && c.passes == 4);
        assert!(c.pmc_warning.unwrap().ends_with("running without counters"));
        let c = parse(&[("KRPHASE_PMC", "A;B;C"), ("KRPHASE_PASSES", "2")])
            .unwrap()
            .unwrap();
        assert!(c.pmc.is_none() && c.passes == 2);
        assert!(c.pmc_warning.unwrap().contains("KRPHASE_PASSES=2"));
    }

    #[test]
    fn values_parse() {
        let c = parse(&[
            ("KRPHASE_PASSES", "4"),
            ("KRPHASE_KERNEL_FILTER", "^stream_"),
            ("KRPHASE_PAYLOAD_LAYOUT", "A"),
            ("KRPHASE_ON_FULL", "block"),
            ("KRPHASE_MODE", "observe"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.passes, 4);
        assert!(
            c.filter
                .as_ref()
                .unwrap()
                .selects("_Z11stream_copyPKdPdm.kd")
        );
        assert!(!c.filter.as_ref().unwrap().selects("_Z5saxpydPKdPdm.kd"));
        assert_eq!(c.layout, Some(PayloadLayout::A));
        assert_eq!(c.on_full, OnFull::Block);
        assert_eq!(c.effective_mode(), Mode::Observe);
    }
}
