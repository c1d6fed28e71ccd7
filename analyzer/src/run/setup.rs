//! What `krphase run` starts: the command line (the application, or rocprofv3 around it) and the
//! variables that make libkrphase.so record it — the tool list as the SDK reads it, the mode, the
//! SDK's log level and the output names.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::args::RunArgs;

/// Rank variables of the usual launchers, first found wins: the list libkrphase.so reads for
/// `%rank%` (`tool/src/output/rank.rs`).
const RANK_VARIABLES: [&str; 6] = [
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
    "RANK",
];

/// One run's command, environment and files.
#[derive(Debug)]
pub struct Plan {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Variables set for it (on top of krphase's own environment).
    pub env: Vec<(String, String)>,
    /// The launcher's rank variable and value, when the run is one rank of a parallel job.
    pub rank: Option<(&'static str, String)>,
    /// Where the application's stderr is kept (the SDK's log lines among it).
    pub log: PathBuf,
    /// Whether rocprofv3 owns replay (krphase observes).
    pub under_rocprofv3: bool,
}

/// The plan for `args`, with `env` as the environment krphase runs in.
pub fn plan(args: &RunArgs, tool: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Plan> {
    let rank = RANK_VARIABLES
        .iter()
        .find_map(|v| env(v).map(|value| (*v, value)));
    // One rank's files carry host and rank, so that a job's ranks can share one directory.
    let stem = match rank {
        Some(_) => "krphase-%hostname%-r%rank%",
        None => "krphase-%pid%",
    };
    let mut list = tool_list(env("ROCP_TOOL_LIBRARIES"), tool);
    if args.rocprofv3.is_some() {
        // rocprofv3 appends ':' and its own tool, which is found through LD_PRELOAD as well.
        list.pop();
    }
    let mut vars = vec![
        ("ROCP_TOOL_LIBRARIES".to_string(), list),
        ("ROCPROFILER_LOG_LEVEL".into(), "info".into()),
        (
            "KRPHASE_OUTPUT".into(),
            path_text(&args.dir.join(format!("{stem}.krp")))?,
        ),
    ];
    vars.push((
        "KRPHASE_MODE".into(),
        if args.rocprofv3.is_some() {
            "observe"
        } else {
            "drive"
        }
        .into(),
    ));
    if args.rocprofv3.is_none() {
        drive_variables(args, &mut vars);
    }
    let argv = match &args.rocprofv3 {
        // Each rank's rocpd database a name of its own, as its phase file and log have.
        Some(cmd) => rocprofv3_argv(
            cmd,
            args,
            &match &rank {
                Some((_, r)) => format!("run-{}-r{r}", hostname()),
                None => "run".to_string(),
            },
        )?,
        None => args.app.clone(),
    };
    let log_name = match &rank {
        Some((_, r)) => format!("krphase-{}-r{r}.log", hostname()),
        None => "krphase-stderr.log".to_string(),
    };
    Ok(Plan {
        argv,
        env: vars,
        rank,
        log: args.dir.join(log_name),
        under_rocprofv3: args.rocprofv3.is_some(),
    })
}

/// Drive mode's settings: passes, groups, filter. Without --passes, counter groups leave the
/// pass count to libkrphase.so's rule (one pass per group, two for a single group: one pass is
/// no replay); without groups it is two.
fn drive_variables(args: &RunArgs, vars: &mut Vec<(String, String)>) {
    let passes = match (args.passes, args.pmc.is_empty()) {
        (Some(n), _) => Some(n),
        (None, true) => Some(2),
        (None, false) => None,
    };
    if let Some(n) = passes {
        vars.push(("KRPHASE_PASSES".into(), n.to_string()));
    }
    if !args.pmc.is_empty() {
        vars.push(("KRPHASE_PMC".into(), args.pmc.join(";")));
    }
    if let Some(f) = &args.kernel_filter {
        vars.push(("KRPHASE_KERNEL_FILTER".into(), f.clone()));
    }
}

/// `ROCP_TOOL_LIBRARIES` with libkrphase.so in it as the SDK reads the list: the SDK keeps an
/// entry only when a ':' follows it, so every entry, ours included, ends with one. The user's
/// entries come first, in their order.
pub fn tool_list(current: Option<String>, tool: &Path) -> String {
    let tool = tool.to_string_lossy();
    let mut entries: Vec<&str> = current
        .as_deref()
        .unwrap_or("")
        .split(':')
        .filter(|e| !e.is_empty())
        .collect();
    if !entries.contains(&tool.as_ref()) {
        entries.push(&tool);
    }
    entries.iter().map(|e| format!("{e}:")).collect()
}

/// rocprofv3 around the application, as the README's observe example runs it: kernel replay, one
/// `--pmc` per group, its outputs (a rocpd database) in the run's directory under `output_name`.
fn rocprofv3_argv(cmd: &str, args: &RunArgs, output_name: &str) -> Result<Vec<String>> {
    let Some(mut argv) = shlex::split(cmd).filter(|w| !w.is_empty()) else {
        bail!("--rocprofv3 {cmd:?}: not a command (empty, or unbalanced quotes)");
    };
    if args.pmc.len() < 2 {
        bail!(
            "--rocprofv3 needs at least two --pmc groups: rocprofv3 replays once per group, and \
             one pass is no replay"
        );
    }
    argv.extend(["--replay-mode", "kernel", "--kernel-replay-beta-enabled"].map(String::from));
    for group in &args.pmc {
        argv.push("--pmc".into());
        argv.extend(group.split_whitespace().map(String::from));
    }
    // Its counter values in a rocpd database, which the run's import attaches to the windows,
    // and in its JSON output, the one format that keeps each record's `replay_pass` (pass
    // fidelity compares the passes with it).
    argv.extend([
        "--output-format".into(),
        "rocpd".into(),
        "json".into(),
        "-d".into(),
        path_text(&args.dir)?,
        "-o".into(),
        output_name.into(),
        "--".into(),
    ]);
    argv.extend(args.app.iter().cloned());
    Ok(argv)
}

fn path_text(p: &Path) -> Result<String> {
    match p.to_str() {
        Some(s) => Ok(s.to_string()),
        None => bail!("{}: krphase run needs a UTF-8 path", p.display()),
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

/// libkrphase.so: `--tool`, else beside this executable, else in `../lib`.
pub fn find_tool(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(t) = given {
        if !t.is_file() {
            bail!("--tool {}: no such file", t.display());
        }
        return Ok(std::path::absolute(t)?);
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join("libkrphase.so"), dir.join("../lib/libkrphase.so")];
    match candidates.iter().find(|c| c.is_file()) {
        Some(c) => Ok(std::path::absolute(c)?),
        None => bail!(
            "libkrphase.so is neither beside {} nor in ../lib: build it (cargo build --release -p \
             krphase-tool) or pass --tool FILE",
            exe.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rocprofv3_args(pmc: &[&str]) -> RunArgs {
        RunArgs {
            dir: PathBuf::from("out"),
            rocprofv3: Some("rocprofv3".into()),
            pmc: pmc.iter().map(|g| g.to_string()).collect(),
            passes: None,
            kernel_filter: None,
            tool: None,
            label: None,
            force: false,
            app: vec!["./app".into()],
        }
    }

    #[test]
    fn each_ranks_rocpd_database_is_named_apart_and_one_group_is_refused() {
        let t = Path::new("/p/libkrphase.so");
        let args = rocprofv3_args(&["SQ_WAVES GRBM_COUNT", "SQ_INSTS_VALU"]);
        let alone = plan(&args, t, &|_| None).unwrap();
        let o = alone.argv.iter().position(|w| w == "-o").unwrap();
        assert_eq!(alone.argv[o + 1], "run");
        let rank = |k: &str| (k == "SLURM_PROCID").then(|| "3".to_string());
        let ranked = plan(&args, t, &rank).unwrap();
        let o = ranked.argv.iter().position(|w| w == "-o").unwrap();
        assert_eq!(ranked.argv[o + 1], format!("run-{}-r3", hostname()));
        assert_eq!(
            &ranked.argv[ranked.argv.len() - 2..],
            ["--", "./app"],
            "the application last"
        );
        let err = plan(&rocprofv3_args(&["SQ_WAVES"]), t, &|_| None).unwrap_err();
        assert!(
            err.to_string().contains("at least two --pmc groups"),
            "{err}"
        );
    }

    #[test]
    fn every_entry_of_the_tool_list_ends_with_a_colon() {
        let t = Path::new("/p/libkrphase.so");
        assert_eq!(tool_list(None, t), "/p/libkrphase.so:");
        assert_eq!(tool_list(Some("a.so".into()), t), "a.so:/p/libkrphase.so:");
        assert_eq!(tool_list(Some("a.so:".into()), t), "a.so:/p/libkrphase.so:");
        assert_eq!(
            tool_list(Some("/p/libkrphase.so".into()), t),
            "/p/libkrphase.so:"
        );
        assert_eq!(
            tool_list(Some(":a.so::b.so".into()), t),
            "a.so:b.so:/p/libkrphase.so:"
        );
    }
}
