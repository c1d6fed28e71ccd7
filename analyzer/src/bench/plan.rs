//! The plan: the measurements of the chosen experiments, in order, each with the rocprofv3
//! command that measures it.

use std::path::Path;

use super::args::{BenchArgs, Experiment};
use super::command::{self, CommandSpec, Counters};
use crate::db::benchmark::CollectionMode;
use crate::db::measurements::{P6_DRIVE_TRACED, P6_DRIVE_UNTRACED, P6_TOOL_OFF};

/// One planned measurement: one CSV row.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedMeasurement {
    pub experiment: Experiment,
    pub variant: String,
    pub mode: CollectionMode,
    pub detail: String,
    pub spec: CommandSpec,
    /// Keep the SDK's INFO log (P3/P4 for the SDK's snapshot bytes, P5 for the drain).
    pub sdk_log: bool,
    /// `--sdk-build`: the emulated SDK build every run of this measurement plays.
    pub sdk_build: Option<String>,
    /// The tool's settings for this measurement, over the bench's own (`measure::run_env`).
    pub tool_env: Vec<(String, String)>,
    /// Runs alternate with the neighbouring measurements that also set this (one run of each
    /// in turn), so the machine's drift falls on each alike: P6's tracing-cost rows.
    pub interleaved: bool,
}

impl PlannedMeasurement {
    pub fn outdir(&self) -> &Path {
        &self.spec.outdir
    }
}

/// What every planned command shares: the counter groups, the work directory, the application.
struct Planner<'a> {
    args: &'a BenchArgs,
    groups: Vec<Vec<String>>,
    out: Vec<PlannedMeasurement>,
}

impl Planner<'_> {
    /// A command collecting `groups` into `work/dir`, with replay on or off and extra arguments.
    fn spec(
        &self,
        groups: Vec<Vec<String>>,
        replay: bool,
        extra: &[&str],
        dir: &str,
    ) -> CommandSpec {
        CommandSpec {
            counters: Counters::Pmc(groups),
            replay,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            outdir: self.args.workdir.join(dir),
            app: self.args.app_command(),
        }
    }

    fn push(
        &mut self,
        experiment: Experiment,
        variant: String,
        mode: CollectionMode,
        detail: String,
        spec: CommandSpec,
        sdk_log: bool,
    ) {
        self.out.push(PlannedMeasurement {
            experiment,
            variant,
            mode,
            detail,
            spec,
            sdk_log,
            sdk_build: self.args.sdk_build.clone(),
            tool_env: Vec::new(),
            interleaved: false,
        });
    }

    /// P1: each group alone (application replay's runs), multiplexed, and kernel replay.
    fn p1(&mut self) {
        let e = Experiment::P1;
        let g = self.groups.len();
        for (i, group) in self.groups.clone().into_iter().enumerate() {
            let spec = self.spec(vec![group], false, &[], &format!("p1-base-{i}"));
            self.push(
                e,
                format!("application-replay-run-{i}"),
                CollectionMode::SinglePass,
                command::UNIQUE_COUNTERS[i].to_string(),
                spec,
                false,
            );
        }
        let spec = CommandSpec {
            counters: Counters::InputFile(self.args.workdir.join(command::MULTIPLEX_FILE)),
            ..self.spec(vec![], false, &[], "p1-multiplexed")
        };
        self.push(
            e,
            "multiplexed-all-groups".into(),
            CollectionMode::Multiplexed,
            format!("{g} groups rotated across dispatches, one run"),
            spec,
            false,
        );
        let spec = self.spec(self.groups.clone(), true, &[], "p1-replay");
        self.push(
            e,
            "replay-all-groups".into(),
            CollectionMode::KernelReplay,
            format!("{g} groups, one run"),
            spec,
            false,
        );
    }

    /// P2: 1..=G groups, kernel replay from two groups on.
    fn p2(&mut self) {
        for n in 1..=self.groups.len() {
            let replay = n > 1;
            let spec = self.spec(self.groups[..n].to_vec(), replay, &[], &format!("p2-{n}"));
            self.push(
                Experiment::P2,
                format!("passes-{n}"),
                if replay {
                    CollectionMode::KernelReplay
                } else {
                    CollectionMode::SinglePass
                },
                // replay_perf.py's own text, so the two CSVs compare row for row.
                format!("{n} group(s)"),
                spec,
                false,
            );
        }
    }

    /// P3/P4: kernel replay of all groups at each footprint, SDK log kept for its bytes.
    fn p3(&mut self) {
        for &n in &self.args.footprints {
            let spec = CommandSpec {
                app: command::with_elements(&self.args.app_command(), n),
                ..self.spec(self.groups.clone(), true, &[], &format!("p3-{n}"))
            };
            self.push(
                Experiment::P3,
                format!("elements-{n}"),
                CollectionMode::KernelReplay,
                format!("{n} elements"),
                spec,
                true,
            );
        }
    }

    /// P5: kernel replay of all groups with the SDK log kept for the drain.
    fn p5(&mut self) {
        let g = self.groups.len();
        let spec = self.spec(self.groups.clone(), true, &[], "p5-drain");
        self.push(
            Experiment::P5,
            "drain-share".into(),
            CollectionMode::KernelReplay,
            format!("{g} groups, one run, SDK INFO log kept for the drain"),
            spec,
            true,
        );
    }

    /// P6: one group without replay, and replay configured to match no kernel.
    fn p6(&mut self) {
        let e = Experiment::P6;
        let spec = self.spec(self.groups[..1].to_vec(), false, &[], "p6-baseline");
        self.push(
            e,
            "no-replay".into(),
            CollectionMode::SinglePass,
            "single group, replay not configured".into(),
            spec,
            false,
        );
        let spec = self.spec(
            self.groups.clone(),
            true,
            &["--kernel-include-regex", command::NO_KERNEL_REGEX],
            "p6-filtered",
        );
        self.push(
            e,
            "replay-active-none-matched".into(),
            CollectionMode::KernelReplay,
            "replay configured, no kernel matches".into(),
            spec,
            false,
        );
        if !self.args.no_tool {
            self.p6_tracing();
        }
    }

    /// P6's split of krphase's own dispatch tracing from replay's tax: one group without
    /// rocprofv3's replay, and libkrphase.so off, or driving replay with a filter that matches
    /// no kernel, with and without dispatch tracing (`KRPHASE_GPU_TIMES`); the three
    /// interleaved run by run.
    fn p6_tracing(&mut self) {
        let drive = |gpu_times: &str| {
            vec![
                ("KRPHASE_MODE".to_string(), "drive".to_string()),
                (
                    "KRPHASE_KERNEL_FILTER".to_string(),
                    command::NO_KERNEL_REGEX.to_string(),
                ),
                ("KRPHASE_GPU_TIMES".to_string(), gpu_times.to_string()),
            ]
        };
        for (variant, dir, detail, env) in [
            (
                P6_TOOL_OFF,
                "p6-tool-off",
                "single group, libkrphase.so loaded and disabled (KRPHASE_DISABLE=1)",
                vec![("KRPHASE_DISABLE".to_string(), "1".to_string())],
            ),
            (
                P6_DRIVE_UNTRACED,
                "p6-drive-untraced",
                "single group, krphase drives replay, no kernel matches, KRPHASE_GPU_TIMES=0",
                drive("0"),
            ),
            (
                P6_DRIVE_TRACED,
                "p6-drive-traced",
                "single group, krphase drives replay, no kernel matches, KRPHASE_GPU_TIMES=1",
                drive("1"),
            ),
        ] {
            let spec = self.spec(self.groups[..1].to_vec(), false, &[], dir);
            self.push(
                Experiment::P6,
                variant.into(),
                CollectionMode::SinglePass,
                detail.into(),
                spec,
                false,
            );
            let last = self.out.last_mut().expect("just pushed");
            last.tool_env = env;
            last.interleaved = true;
        }
    }
}

/// The measurements of the chosen experiments, in order.
pub fn plan(args: &BenchArgs) -> Vec<PlannedMeasurement> {
    let only: Vec<Experiment> = if args.only.is_empty() {
        Experiment::ALL.to_vec()
    } else {
        args.only.clone()
    };
    let mut p = Planner {
        args,
        groups: command::groups(args.groups as usize),
        out: Vec::new(),
    };
    for e in only {
        match e {
            Experiment::P1 => p.p1(),
            Experiment::P2 => p.p2(),
            Experiment::P3 => p.p3(),
            Experiment::P5 => p.p5(),
            Experiment::P6 => p.p6(),
        }
    }
    p.out
}
