//! The application as a child process: started with the run's environment and stderr, sent the
//! SIGINT and SIGTERM that krphase receives, and its end turned into krphase's own.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::SignalsInfo;
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::low_level::siginfo::Cause;

use super::setup::Plan;

/// How the application ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It exited with this status.
    Exited(i32),
    /// A signal killed it.
    Signalled(i32),
}

impl From<ExitStatus> for End {
    fn from(s: ExitStatus) -> End {
        match (s.code(), s.signal()) {
            (Some(c), _) => End::Exited(c),
            (None, Some(n)) => End::Signalled(n),
            (None, None) => End::Exited(1),
        }
    }
}

impl End {
    /// What the shell shows for it (`$?`).
    pub fn shell_status(self) -> i32 {
        match self {
            End::Exited(c) => c,
            End::Signalled(n) => 128 + n,
        }
    }
}

/// Starts the application. From here on SIGINT and SIGTERM do not end krphase: they are passed
/// to the application, whose end krphase then waits for, imports and reports.
pub fn spawn(plan: &Plan, stderr: Stdio) -> Result<Child> {
    let signals = SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM])
        .context("cannot take SIGINT and SIGTERM to pass them on")?;
    let child = Command::new(&plan.argv[0])
        .args(&plan.argv[1..])
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot run {}", plan.argv[0]))?;
    forward(signals, child.id());
    Ok(child)
}

/// Passes each SIGINT and SIGTERM sent to krphase on to process `pid`. One the terminal sent
/// (Ctrl-C) already reached the application, which is in the same process group, and is not sent
/// twice.
fn forward(mut signals: SignalsInfo<WithOrigin>, pid: u32) {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    std::thread::spawn(move || {
        for origin in signals.forever() {
            if matches!(origin.cause, Cause::Kernel) {
                continue;
            }
            let sig = match origin.signal {
                SIGINT => rustix::process::Signal::INT,
                _ => rustix::process::Signal::TERM,
            };
            let _ = rustix::process::kill_process(pid, sig);
        }
    });
}

/// Ends krphase as the application ended: the same exit status, or death by the same signal
/// (the shell then reports it alike).
pub fn end_like(end: End) -> ! {
    if let End::Signalled(n) = end {
        let _ = signal_hook::low_level::emulate_default_handler(n);
    }
    std::process::exit(end.shell_status())
}
