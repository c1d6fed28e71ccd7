//! The plan: the measurements of the chosen experiments, in order, each with the rocprofv3
//! command that measures it.

use std::path::Path;

use super::args::{BenchArgs, Experiment};
use super::command::{self, CommandSpec, Counters};
use crate::db::benchmark::CollectionMode;

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
