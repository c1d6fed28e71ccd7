//! `krphase-emu rocprofv3 [options] -- APP ARGS`: a stand-in for rocprofv3 covering what the
//! benchmark harness depends on.
//!
//! - Several `--pmc` groups without kernel replay: application replay, the APP runs once per
//!   group, each run writing under `<d>/pass_<n>` (n from 1) with one group in `ROCPROF_COUNTERS`.
//! - `--replay-mode kernel --kernel-replay-beta-enabled`: one APP run whose internal counter tool
//!   (the emulator's driver client) claims kernel replay with one pass per group:
//!   `KRPHASE_EMU_DRIVER_PASSES=G`, `ROCPROF_KERNEL_REPLAY=1`, `ROCPROF_COUNTER_GROUPS`.
//! - `--kernel-replay-beta-enabled` without `--replay-mode kernel`: as rocprofv3 does from
//!   ROCm's rocprofv3.py @01610ac2 on, application replay (with a warning on stderr; the flag is
//!   only the acknowledgement). `--replay-mode kernel` without the flag is rejected.
//! - `-i FILE` (JSON) with `pmc_groups` and `pmc_group_interval`: the groups rotate across
//!   dispatches in one run (`ROCPROF_COUNTER_GROUPS`, `ROCPROF_COUNTER_GROUPS_INTERVAL`).
//! - `--kernel-include-regex R` -> `KRPHASE_EMU_DRIVER_FILTER` (the driver's include regex).
//! - `-d`, `-o`, `--output-format json|csv`: a small per-run file listing the group each
//!   dispatch was counted with, under the run's output directory.
//!
//! The tool entry: rocprofv3 appends `librocprofiler-sdk-tool.so` to `ROCP_TOOL_LIBRARIES`. The
//! emulator has no such library to load; its counter tool is the built-in driver client, which
//! is configured through the `KRPHASE_EMU_DRIVER_*` variables instead, so the stand-in leaves
//! `ROCP_TOOL_LIBRARIES` exactly as given (the user's tools, e.g. libkrphase.so, stay in it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One counter group: counter names.
pub type Group = Vec<String>;

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    pub groups: Vec<Group>,
    pub replay_mode: Option<String>,
    pub beta_flag: Option<bool>,
    pub input: Option<PathBuf>,
    pub kernel_include_regex: Option<String>,
    pub output_directory: Option<PathBuf>,
    pub output_file: Option<String>,
    pub output_formats: Vec<String>,
    pub app: Vec<String>,
}

/// How the counter groups are collected.
#[derive(Debug, Clone, PartialEq)]
pub enum Collection {
    /// No counters: one plain run.
    None,
    /// One group, one run.
    SinglePass(Group),
    /// One run per group.
    ApplicationReplay(Vec<Group>),
    /// Groups rotate across dispatches every `interval` dispatches, one run.
    Rotation { groups: Vec<Group>, interval: u64 },
    /// One run; each dispatch replayed once per group.
    KernelReplay(Vec<Group>),
}

/// One APP launch: output directory and environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub output_path: PathBuf,
    pub env: Vec<(String, String)>,
    /// Pass number under application replay (`pass_<n>`).
    pub pass: Option<usize>,
}

fn truth(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "y" | "yes" | "t" | "true" | "on" | "1" => Some(true),
        "n" | "no" | "f" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

fn split_counters(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split([' ', ','])
        .filter(|c| !c.is_empty())
        .map(String::from)
}

/// Parses the stand-in's command line (everything after `rocprofv3`).
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut i = 0;
    let value = |i: &mut usize, name: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .filter(|v| !v.starts_with('-') || v.len() == 1)
            .cloned()
            .ok_or_else(|| format!("{name} needs a value"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        match name {
            "--" => {
                o.app = args[i + 1..].to_vec();
                break;
            }
            "--pmc" => {
                let mut group: Group = inline.iter().flat_map(|v| split_counters(v)).collect();
                while let Some(next) = args.get(i + 1).filter(|n| !n.starts_with('-')) {
                    group.extend(split_counters(next));
                    i += 1;
                }
                if group.is_empty() {
                    return Err("--pmc needs at least one counter".into());
                }
                o.groups.push(group);
            }
            "--kernel-replay-beta-enabled" => {
                o.beta_flag = Some(match inline {
                    Some(v) => truth(&v).ok_or_else(|| {
                        format!("invalid value {v:?} for --kernel-replay-beta-enabled")
                    })?,
                    None => match args.get(i + 1).and_then(|n| truth(n)) {
                        Some(v) => {
                            i += 1;
                            v
                        }
                        None => true,
                    },
                });
            }
            "--replay-mode" => {
                let v = match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                };
                if v != "kernel" && v != "application" {
                    return Err(format!(
                        "--replay-mode {v:?}: expected kernel or application"
                    ));
                }
                o.replay_mode = Some(v);
            }
            "-i" | "--input" => {
                o.input = Some(PathBuf::from(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                }))
            }
            "--kernel-include-regex" => {
                let v = match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                };
                regex::Regex::new(&v)
                    .map_err(|e| format!("--kernel-include-regex {v:?} is not a regex: {e}"))?;
                o.kernel_include_regex = Some(v);
            }
            "-d" | "--output-directory" => {
                o.output_directory = Some(PathBuf::from(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                }))
            }
            "-o" | "--output-file" => {
                o.output_file = Some(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                })
            }
            "--output-format" => {
                let mut formats: Vec<String> = inline.into_iter().collect();
                while let Some(next) = args.get(i + 1).filter(|n| !n.starts_with('-')) {
                    formats.push(next.clone());
                    i += 1;
                }
                for f in formats.iter().flat_map(|f| f.split(',')) {
                    if f != "json" && f != "csv" {
                        return Err(format!(
                            "--output-format {f:?}: the stand-in writes json or csv"
                        ));
                    }
                    o.output_formats.push(f.to_string());
                }
            }
            other => return Err(format!("unrecognized option {other:?}")),
        }
        i += 1;
    }
    if o.app.is_empty() {
        return Err("no application given (expected `-- APP ARGS`)".into());
    }
    Ok(o)
}

/// The input file's groups and rotation interval (`jobs[0]`, JSON only).
pub fn read_input(path: &Path) -> Result<(Vec<Group>, u64), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read input file {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("input file {} is not JSON: {e}", path.display()))?;
    let job = v
        .get("jobs")
        .and_then(|j| j.get(0))
        .ok_or_else(|| format!("input file {} has no jobs[0]", path.display()))?;
    let strings = |g: &serde_json::Value| -> Option<Group> {
        g.as_array()?
            .iter()
            .map(|c| c.as_str().map(String::from))
            .collect()
    };
    let groups: Vec<Group> = if let Some(gs) = job.get("pmc_groups") {
        gs.as_array()
            .and_then(|a| a.iter().map(strings).collect::<Option<Vec<_>>>())
            .ok_or_else(|| format!("{}: pmc_groups must be a list of lists", path.display()))?
    } else if let Some(p) = job.get("pmc") {
        vec![strings(p).ok_or_else(|| format!("{}: pmc must be a list", path.display()))?]
    } else {
        Vec::new()
    };
    let interval = match job.get("pmc_group_interval") {
        None => 1,
        Some(n) => n
            .as_u64()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{}: pmc_group_interval must be >= 1", path.display()))?,
    };
    Ok((groups, interval))
}

/// Decides how the groups are collected, as rocprofv3 @01610ac2 does.
pub fn plan(o: &Options) -> Result<(Collection, Option<String>), String> {
    let kernel_mode = o.replay_mode.as_deref() == Some("kernel");
    let mut warning = None;
    if kernel_mode && o.beta_flag != Some(true) {
        return Err(
            "--replay-mode kernel is experimental: add --kernel-replay-beta-enabled".into(),
        );
    }
    if o.beta_flag == Some(true) && !kernel_mode {
        warning = Some(
            "--kernel-replay-beta-enabled without --replay-mode kernel does not enable kernel \
             replay; several --pmc groups use application replay"
                .to_string(),
        );
    }
    let (groups, interval) = match &o.input {
        Some(path) => {
            if !o.groups.is_empty() {
                return Err("give counters either with --pmc or with -i, not both".into());
            }
            let (g, i) = read_input(path)?;
            (g, Some(i))
        }
        None => (o.groups.clone(), None),
    };
    if kernel_mode {
        if groups.is_empty() {
            return Err("--replay-mode kernel requires counters (--pmc or -i pmc_groups)".into());
        }
        return Ok((Collection::KernelReplay(groups), warning));
    }
    let c = match (groups.len(), interval) {
        (0, _) => Collection::None,
        (1, _) => Collection::SinglePass(groups[0].clone()),
        (_, Some(interval)) => Collection::Rotation { groups, interval },
        (_, None) => Collection::ApplicationReplay(groups),
    };
    Ok((c, warning))
}

fn groups_env(groups: &[Group]) -> String {
    groups
        .iter()
        .map(|g| format!("pmc: {}", g.join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The APP launches of a plan.
pub fn launches(o: &Options, c: &Collection) -> Vec<Launch> {
    let base = o
        .output_directory
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let mut common = vec![(
        "ROCPROF_OUTPUT_FILE_NAME".to_string(),
        o.output_file.clone().unwrap_or_else(|| "out".into()),
    )];
    if let Some(r) = &o.kernel_include_regex {
        common.push(("ROCPROF_KERNEL_FILTER_INCLUDE_REGEX".into(), r.clone()));
        common.push(("KRPHASE_EMU_DRIVER_FILTER".into(), r.clone()));
    }
    let one = |env: Vec<(String, String)>| Launch {
        output_path: base.clone(),
        env,
        pass: None,
    };
    let with = |extra: Vec<(&str, String)>| {
        let mut env = common.clone();
        env.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        env
    };
    match c {
        Collection::None => vec![one(with(vec![]))],
        Collection::SinglePass(g) => vec![one(with(vec![("ROCPROF_COUNTERS", g.join(" "))]))],
        Collection::Rotation { groups, interval } => vec![one(with(vec![
            ("ROCPROF_COUNTER_GROUPS", groups_env(groups)),
            ("ROCPROF_COUNTER_GROUPS_INTERVAL", interval.to_string()),
        ]))],
        Collection::KernelReplay(groups) => vec![one(with(vec![
            ("ROCPROF_KERNEL_REPLAY", "1".into()),
            ("ROCPROF_COUNTER_GROUPS", groups_env(groups)),
            ("KRPHASE_EMU_DRIVER_PASSES", groups.len().to_string()),
        ]))],
        Collection::ApplicationReplay(groups) => groups
            .iter()
            .enumerate()
            .map(|(n, g)| Launch {
                output_path: base.join(format!("pass_{}", n + 1)),
                env: with(vec![("ROCPROF_COUNTERS", g.join(" "))]),
                pass: Some(n + 1),
            })
            .collect(),
    }
}

/// The dispatch count from the APP's last `result <w> ok ... dispatches=<n>` line.
pub fn dispatches_from_stdout(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("result "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("dispatches="))?
        .parse()
        .ok()
}

/// Groups (indices) each dispatch was counted with.
pub fn dispatch_groups(c: &Collection, pass: Option<usize>, dispatches: u64) -> Vec<Vec<usize>> {
    (0..dispatches)
        .map(|d| match c {
            Collection::None => vec![],
            Collection::SinglePass(_) => vec![0],
            Collection::ApplicationReplay(_) => vec![pass.unwrap_or(1) - 1],
            Collection::Rotation { groups, interval } => {
                vec![((d / interval) % groups.len() as u64) as usize]
            }
            Collection::KernelReplay(groups) => (0..groups.len()).collect(),
        })
        .collect()
}

fn collection_name(c: &Collection) -> &'static str {
    match c {
        Collection::None => "none",
        Collection::SinglePass(_) => "single-pass",
        Collection::ApplicationReplay(_) => "application-replay",
        Collection::Rotation { .. } => "multiplexed",
        Collection::KernelReplay(_) => "kernel-replay",
    }
}

fn all_groups(c: &Collection) -> Vec<Group> {
    match c {
        Collection::None => vec![],
        Collection::SinglePass(g) => vec![g.clone()],
        Collection::ApplicationReplay(g)
        | Collection::KernelReplay(g)
        | Collection::Rotation { groups: g, .. } => g.clone(),
    }
}

fn write_outputs(o: &Options, c: &Collection, l: &Launch, dispatches: u64) -> Result<(), String> {
    let name = o.output_file.clone().unwrap_or_else(|| "out".into());
    let per_dispatch = dispatch_groups(c, l.pass, dispatches);
    let formats = if o.output_formats.is_empty() {
        vec!["json".to_string()]
    } else {
        o.output_formats.clone()
    };
    for f in formats {
        let (path, text) = if f == "json" {
            let doc = serde_json::json!({
                "collection": collection_name(c),
                "groups": all_groups(c),
                "pass": l.pass,
                "dispatches": dispatches,
                "dispatch_groups": per_dispatch,
            });
            (
                l.output_path.join(format!("{name}_results.json")),
                doc.to_string(),
            )
        } else {
            let mut s = String::from("dispatch,group\n");
            for (d, gs) in per_dispatch.iter().enumerate() {
                for g in gs {
                    s += &format!("{d},{g}\n");
                }
            }
            (
                l.output_path.join(format!("{name}_counter_collection.csv")),
                s,
            )
        };
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs the stand-in; returns the process exit code.
pub fn main(args: &[String]) -> i32 {
    let fail = |msg: String, code: i32| {
        eprintln!("rocprofv3: error: {msg}");
        code
    };
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => return fail(e, 2),
    };
    let (collection, warning) = match plan(&o) {
        Ok(p) => p,
        Err(e) => return fail(e, 1),
    };
    if let Some(w) = warning {
        eprintln!("rocprofv3: warning: {w}");
    }
    for launch in launches(&o, &collection) {
        if let Err(e) = std::fs::create_dir_all(&launch.output_path) {
            return fail(
                format!("cannot create {}: {e}", launch.output_path.display()),
                1,
            );
        }
        let out_abs = std::fs::canonicalize(&launch.output_path)
            .unwrap_or_else(|_| launch.output_path.clone());
        let mut cmd = Command::new(&o.app[0]);
        cmd.args(&o.app[1..])
            .env("ROCPROF_OUTPUT_PATH", &out_abs)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::inherit())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return fail(format!("cannot run {}: {e}", o.app[0]), 1),
        };
        let out = match child.wait_with_output() {
            Ok(o) => o,
            Err(e) => return fail(format!("waiting for {}: {e}", o.app[0]), 1),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        print!("{stdout}");
        if !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            let code = out
                .status
                .code()
                .unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0));
            eprintln!("rocprofv3: the application exited with {}", out.status);
            return code;
        }
        let dispatches = dispatches_from_stdout(&stdout).unwrap_or(0);
        if let Err(e) = write_outputs(&o, &collection, &launch, dispatches) {
            return fail(e, 1);
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn planned(s: &str) -> Collection {
        plan(&parse(&args(s)).unwrap()).unwrap().0
    }

    #[test]
    fn several_pmc_groups_are_application_replay() {
        let c = planned("--pmc A B --pmc A C -d out -- app 1");
        assert_eq!(
            c,
            Collection::ApplicationReplay(vec![args("A B"), args("A C")])
        );
        let o = parse(&args("--pmc A B --pmc A C -d out -- app 1")).unwrap();
        let l = launches(&o, &c);
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].output_path, PathBuf::from("out/pass_2"));
        assert!(
            l[0].env
                .contains(&("ROCPROF_COUNTERS".into(), "A B".into()))
        );
        assert_eq!(o.app, args("app 1"));
    }

    #[test]
    fn kernel_replay_needs_both_flags_and_drives_one_pass_per_group() {
        let s = "--replay-mode kernel --kernel-replay-beta-enabled --pmc A --pmc B --pmc C -- app";
        let c = planned(s);
        assert!(matches!(c, Collection::KernelReplay(ref g) if g.len() == 3));
        let l = launches(&parse(&args(s)).unwrap(), &c);
        assert_eq!(l.len(), 1);
        assert!(
            l[0].env
                .contains(&("KRPHASE_EMU_DRIVER_PASSES".into(), "3".into()))
        );
        assert!(
            l[0].env
                .contains(&("ROCPROF_KERNEL_REPLAY".into(), "1".into()))
        );
        let missing_ack = parse(&args("--replay-mode kernel --pmc A -- app")).unwrap();
        assert!(plan(&missing_ack).is_err());
    }

    #[test]
    fn beta_flag_alone_is_application_replay_with_a_warning() {
        let o = parse(&args("--pmc A --pmc B --kernel-replay-beta-enabled -- app")).unwrap();
        let (c, warning) = plan(&o).unwrap();
        assert!(matches!(c, Collection::ApplicationReplay(_)));
        assert!(warning.is_some());
    }

    #[test]
    fn input_file_groups_rotate() {
        let dir = std::env::temp_dir().join(format!("rocprofv3-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("in.json");
        std::fs::write(
            &f,
            r#"{"jobs":[{"pmc_groups":[["A","B"],["A","C"],["A","D"]],"pmc_group_interval":2}]}"#,
        )
        .unwrap();
        let o = parse(&args(&format!("-i {} -- app", f.display()))).unwrap();
        let c = plan(&o).unwrap().0;
        assert!(matches!(c, Collection::Rotation { interval: 2, ref groups } if groups.len() == 3));
        let per = dispatch_groups(&c, None, 7);
        assert_eq!(
            per,
            vec![
                vec![0],
                vec![0],
                vec![1],
                vec![1],
                vec![2],
                vec![2],
                vec![0]
            ]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn filter_and_outputs_are_passed() {
        let o = parse(&args(
            "--pmc A --kernel-include-regex ^x$ --output-format json csv -d d -o name -- app",
        ))
        .unwrap();
        assert_eq!(o.output_formats, args("json csv"));
        let l = launches(&o, &plan(&o).unwrap().0);
        assert!(
            l[0].env
                .contains(&("KRPHASE_EMU_DRIVER_FILTER".into(), "^x$".into()))
        );
        assert!(
            l[0].env
                .contains(&("ROCPROF_OUTPUT_FILE_NAME".into(), "name".into()))
        );
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for s in [
            "--pmc A",
            "--bogus -- app",
            "--kernel-replay-beta-enabled=maybe -- app",
            "--kernel-include-regex ( -- app",
            "--output-format rocpd -- app",
            "--replay-mode sometimes -- app",
        ] {
            assert!(parse(&args(s)).is_err(), "{s}");
        }
    }

    #[test]
    fn dispatch_count_comes_from_the_result_line() {
        let out = "x\nresult stream ok checksum=00ff counter=3 dispatches=50\n";
        assert_eq!(dispatches_from_stdout(out), Some(50));
        assert_eq!(dispatches_from_stdout("nothing"), None);
    }
}
