//! `krphase doctor [-- COMMAND ...]`: checks, before a run, the set-up mistakes that otherwise
//! show only at import time or never: a tool list that silently leaves krphase out, a
//! libkrphase.so that does not load, tool settings it would refuse, rocprofv3 flags that mean no
//! kernel replay, an output path that cannot be written or read back, misspelled `KRPHASE_*`
//! names, an SDK log level or stderr redirection that leaves no SDK log to join. Given the
//! command, the checks use the environment that command will see (this one plus its `NAME=value`
//! prefixes). Each finding is one line with its fix; then the order in which the SDK will
//! configure the tools (`order.rs`); the exit code is 1 when any finding would lose the run, 0
//! otherwise.

mod finding;
mod invocation;
mod order;
mod output_paths;
mod rocprofv3;
mod tool_list;
mod variables;

pub use finding::Finding;
use std::collections::BTreeMap;

/// Every finding for `command` (empty: the environment alone), or why the command cannot be read.
pub fn diagnose(command: &[String]) -> Result<Vec<Finding>, String> {
    Ok(examine(command)?.0)
}

/// The findings and the configure-order lines.
fn examine(command: &[String]) -> Result<(Vec<Finding>, Vec<String>), String> {
    let inv = invocation::parse(command)?;
    let mut env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect();
    env.extend(inv.assignments.iter().cloned());
    let rv3 = rocprofv3::parse(&inv.argv);
    let mut out = tool_list::check(&env, rv3.as_ref());
    out.extend(variables::check(&env));
    out.extend(rv3.iter().flat_map(rocprofv3::check));
    out.extend(output_paths::check(&env, rv3.as_ref()));
    out.extend(stderr(&inv));
    Ok((out, order::lines(&env, rv3.as_ref())))
}

/// Where the command's stderr (the SDK log) goes.
fn stderr(inv: &invocation::Invocation) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(r) = &inv.stderr_discarded {
        out.push(Finding::warning(
            format!("the command throws stderr away ({r}): the SDK log is lost, nothing to join"),
            "send stderr to a file instead (2>sdk.log) and krphase import-log it",
        ));
    }
    let runs = |name: &str| inv.argv.iter().take(2).any(|a| invocation::base(a) == name);
    if runs("replay_perf.py") {
        out.push(Finding::warning(
            "replay_perf.py keeps a child's stderr only when the run fails, so no SDK log \
             survives a good run, and it passes --kernel-replay-beta-enabled without \
             --replay-mode kernel (application replay on rocprofv3 builds that need it)",
            "use krphase bench, or run rocprofv3 directly with stderr to a file",
        ));
    }
    out
}

/// The command: prints each finding and a summary; 1 when any would lose the run.
pub fn doctor_command(command: &[String]) -> i32 {
    let (findings, order) = match examine(command) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("krphase: error: {e}");
            return 2;
        }
    };
    for f in &findings {
        println!("{f}");
    }
    for l in &order {
        println!("{l}");
    }
    let traps = findings.iter().filter(|f| f.loses_run).count();
    let warnings = findings.len() - traps;
    let scope = if command.is_empty() {
        " (environment only; give the command after -- to check it too)"
    } else {
        ""
    };
    if traps > 0 {
        println!(
            "krphase doctor: {traps} trap(s) would lose the run, {warnings} warning(s){scope}"
        );
        1
    } else {
        println!("krphase doctor: nothing would lose the run, {warnings} warning(s){scope}");
        0
    }
}
