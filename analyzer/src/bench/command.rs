//! Counter groups and rocprofv3 command construction, as replay_perf.py builds them (plus
//! `--replay-mode kernel`, which newer rocprofv3 needs for kernel replay).

use std::path::{Path, PathBuf};

/// Counters every group carries.
pub const SHARED_COUNTERS: [&str; 2] = ["SQ_WAVES", "SQ_INSTS_VALU"];
/// One unique counter per group, in order; the first G are used.
pub const UNIQUE_COUNTERS: [&str; 5] = [
    "GRBM_COUNT",
    "GRBM_GUI_ACTIVE",
    "SQ_INSTS_SALU",
    "SQ_INSTS_SMEM",
    "SQ_INSTS_LDS",
];
/// The largest G.
pub const MAX_GROUPS: usize = UNIQUE_COUNTERS.len();

/// The kernel replay flags: `--replay-mode kernel` turns it on, the beta flag acknowledges it.
pub const REPLAY_FLAGS: [&str; 3] = ["--replay-mode", "kernel", "--kernel-replay-beta-enabled"];
/// P6's include regex that matches no kernel.
pub const NO_KERNEL_REGEX: &str = "^__no_such_kernel__$";
/// File name of the multiplexed run's input file, under the workdir.
pub const MULTIPLEX_FILE: &str = "multiplex-pmc-groups.json";

/// The first `g` counter groups.
pub fn groups(g: usize) -> Vec<Vec<String>> {
    UNIQUE_COUNTERS[..g.min(MAX_GROUPS)]
        .iter()
        .map(|u| {
            SHARED_COUNTERS
                .iter()
                .chain(std::iter::once(u))
                .map(|s| s.to_string())
                .collect()
        })
        .collect()
}

/// How the counters are handed to rocprofv3.
#[derive(Debug, Clone, PartialEq)]
pub enum Counters {
    /// One `--pmc` flag per group.
    Pmc(Vec<Vec<String>>),
    /// `-i FILE` (input-file group rotation).
    InputFile(PathBuf),
}

/// One rocprofv3 invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    pub counters: Counters,
    pub replay: bool,
    pub extra: Vec<String>,
    pub outdir: PathBuf,
    pub app: Vec<String>,
}

impl CommandSpec {
    /// The rocprofv3 arguments (everything after the launcher, before the app's `--`).
    pub fn profiler_args(&self) -> Vec<String> {
        let mut v = Vec::new();
        match &self.counters {
            Counters::Pmc(groups) => {
                for g in groups {
                    v.push("--pmc".to_string());
                    v.extend(g.iter().cloned());
                }
            }
            Counters::InputFile(p) => {
                v.push("-i".into());
                v.push(p.display().to_string());
            }
        }
        if self.replay {
            v.extend(REPLAY_FLAGS.iter().map(|s| s.to_string()));
        }
        v.extend(self.extra.iter().cloned());
        v.extend(["--output-format".into(), "json".into(), "-d".into()]);
        v.push(self.outdir.display().to_string());
        v.extend(["-o".into(), "out".into()]);
        v
    }

    /// The full command: launcher tokens, rocprofv3 arguments, `--`, the app.
    pub fn argv(&self, rocprofv3: &[String]) -> Vec<String> {
        let mut v = rocprofv3.to_vec();
        v.extend(self.profiler_args());
        v.push("--".into());
        v.extend(self.app.iter().cloned());
        v
    }
}

/// The multiplexed run's input file: one job, the groups, interval 1.
pub fn multiplex_json(groups: &[Vec<String>]) -> serde_json::Value {
    serde_json::json!({ "jobs": [ { "pmc_groups": groups, "pmc_group_interval": 1 } ] })
}

/// True when the app is the emulator's `krphase-emu run WORKLOAD ...`.
pub fn is_emu_run(app: &[String]) -> bool {
    app.len() >= 2
        && Path::new(&app[0])
            .file_name()
            .is_some_and(|n| n == "krphase-emu")
        && app[1] == "run"
}

/// The app with its footprint set to `elements`: `--elements N` for a `krphase-emu run` app,
/// otherwise the first argument replaced (or appended when there is none), as replay_perf.py.
pub fn with_elements(app: &[String], elements: u64) -> Vec<String> {
    let n = elements.to_string();
    let mut v = app.to_vec();
    if is_emu_run(app) {
        if let Some(i) = v.iter().position(|a| a == "--elements") {
            if i + 1 < v.len() {
                v[i + 1] = n;
            } else {
                v.push(n);
            }
        } else if let Some(i) = v.iter().position(|a| a.starts_with("--elements=")) {
            v[i] = format!("--elements={n}");
        } else {
            v.extend(["--elements".to_string(), n]);
        }
    } else if v.len() >= 2 {
        v[1] = n;
    } else {
        v.push(n);
    }
    v
}

/// Finds a program as a path or on PATH.
pub fn find_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The launcher words: `--rocprofv3` split on whitespace, else rocprofv3 on PATH.
pub fn launcher(arg: Option<&str>) -> Vec<String> {
    match arg {
        Some(s) => s.split_whitespace().map(String::from).collect(),
        None => vec![
            find_program("rocprofv3")
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "rocprofv3".into()),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::benchmark::{CollectionMode, derive_replay_config};

    fn spec(groups_n: usize, replay: bool, extra: &[&str]) -> CommandSpec {
        CommandSpec {
            counters: Counters::Pmc(groups(groups_n)),
            replay,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            outdir: PathBuf::from("work/p1-replay"),
            app: vec!["app".into(), "1024".into()],
        }
    }

    fn launcher() -> Vec<String> {
        vec!["rocprofv3".into()]
    }

    #[test]
    fn one_pmc_flag_per_group() {
        let argv = spec(2, false, &[]).argv(&launcher());
        let pmc: Vec<usize> = (0..argv.len()).filter(|&i| argv[i] == "--pmc").collect();
        assert_eq!(pmc.len(), 2);
        for &i in &pmc {
            assert_eq!(&argv[i + 1..i + 3], &["SQ_WAVES", "SQ_INSTS_VALU"]);
        }
        assert_eq!(argv[pmc[0] + 3], "GRBM_COUNT");
        assert_eq!(argv[pmc[1] + 3], "GRBM_GUI_ACTIVE");
    }

    #[test]
    fn replay_flag_is_absent_unless_requested() {
        let argv = spec(2, false, &[]).argv(&launcher());
        assert!(
            !argv
                .iter()
                .any(|a| a == "--kernel-replay-beta-enabled" || a == "--replay-mode")
        );
    }

    #[test]
    fn replay_flag_precedes_the_application() {
        let argv = spec(2, true, &[]).argv(&launcher());
        let sep = argv.iter().position(|a| a == "--").unwrap();
        let flag = argv
            .iter()
            .position(|a| a == "--kernel-replay-beta-enabled")
            .unwrap();
        let mode = argv.iter().position(|a| a == "--replay-mode").unwrap();
        assert!(flag < sep && mode < sep);
        assert_eq!(argv[mode + 1], "kernel");
    }

    #[test]
    fn application_is_last_and_separated() {
        let argv = spec(1, true, &[]).argv(&launcher());
        let sep = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(&argv[sep + 1..], &["app", "1024"]);
        assert_eq!(argv[0], "rocprofv3");
    }

    #[test]
    fn extra_arguments_are_included() {
        let argv = spec(2, true, &["--kernel-include-regex", NO_KERNEL_REGEX]).argv(&launcher());
        let sep = argv.iter().position(|a| a == "--").unwrap();
        let x = argv
            .iter()
            .position(|a| a == "--kernel-include-regex")
            .unwrap();
        assert!(x < sep);
        assert_eq!(argv[x + 1], NO_KERNEL_REGEX);
    }

    #[test]
    fn output_directory_is_per_measurement() {
        let argv = spec(1, false, &[]).argv(&launcher());
        let d = argv.iter().position(|a| a == "-d").unwrap();
        assert_eq!(argv[d + 1], "work/p1-replay");
        let fmt = argv.iter().position(|a| a == "--output-format").unwrap();
        assert_eq!(argv[fmt + 1], "json");
    }

    #[test]
    fn multiplexing_uses_input_file_group_rotation() {
        let s = CommandSpec {
            counters: Counters::InputFile(PathBuf::from("work/multiplex-pmc-groups.json")),
            ..spec(3, false, &[])
        };
        let argv = s.argv(&launcher());
        assert!(!argv.iter().any(|a| a == "--pmc"));
        let i = argv.iter().position(|a| a == "-i").unwrap();
        assert_eq!(argv[i + 1], "work/multiplex-pmc-groups.json");
        let j = multiplex_json(&groups(3));
        assert_eq!(j["jobs"][0]["pmc_group_interval"], 1);
        let g = j["jobs"][0]["pmc_groups"].as_array().unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(
            g[2],
            serde_json::json!(["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU"])
        );
    }

    #[test]
    fn modes_match_the_database_vocabulary() {
        let mode = |s: CommandSpec| {
            derive_replay_config(Some(&s.profiler_args()))
                .unwrap()
                .unwrap()
                .counter_collection_mode
        };
        assert_eq!(mode(spec(1, false, &[])), CollectionMode::SinglePass);
        assert_eq!(mode(spec(2, false, &[])), CollectionMode::ApplicationReplay);
        assert_eq!(mode(spec(2, true, &[])), CollectionMode::KernelReplay);
    }

    #[test]
    fn footprint_replaces_the_first_argument_or_sets_elements() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            with_elements(&s(&["kr", "1048576", "3"]), 64),
            s(&["kr", "64", "3"])
        );
        assert_eq!(with_elements(&s(&["kr"]), 64), s(&["kr", "64"]));
        assert_eq!(
            with_elements(&s(&["krphase-emu", "run", "stream"]), 64),
            s(&["krphase-emu", "run", "stream", "--elements", "64"])
        );
        assert_eq!(
            with_elements(
                &s(&["/x/krphase-emu", "run", "saxpy", "--elements", "9"]),
                64
            ),
            s(&["/x/krphase-emu", "run", "saxpy", "--elements", "64"])
        );
    }
}
