//! The application as a child process: started with the run's environment and stderr, sent the
//! SIGINT and SIGTERM that krphase receives while it runs, and its end turned into krphase's own.
//! Once it has ended, a SIGINT or SIGTERM ends krphase itself, as it would any command.

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process, waitid};
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

/// The process signals are passed on to: the application while it runs, `None` once it ended.
type Target = Arc<Mutex<Option<Pid>>>;

/// The running application.
pub struct App {
    child: Child,
    target: Target,
}

/// Starts the application. While it runs, SIGINT and SIGTERM do not end krphase: they are passed
/// to the application, whose end krphase then waits for, imports and reports.
pub fn spawn(plan: &Plan, stderr: Stdio) -> Result<App> {
    // Taken before the child exists, so that no signal falls between its start and the
    // forwarding.
    let signals = SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM])
        .context("cannot take SIGINT and SIGTERM to pass them on")?;
    let child = Command::new(&plan.argv[0])
        .args(&plan.argv[1..])
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stderr(stderr)
        .spawn()
        .with_context(|| format!("cannot run {}", plan.argv[0]))?;
    let target: Target = Arc::new(Mutex::new(Pid::from_raw(child.id() as i32)));
    forward(signals, Arc::clone(&target));
    Ok(App { child, target })
}

/// Passes each SIGINT and SIGTERM sent to krphase on to the target. One the terminal sent
/// (Ctrl-C) already reached the application, which is in the same process group, and is not sent
/// twice. With no target left (the application ended), the signal ends krphase.
fn forward(mut signals: SignalsInfo<WithOrigin>, target: Target) {
    std::thread::spawn(move || {
        for origin in signals.forever() {
            let pid = *target.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(pid) = pid else {
                let _ = signal_hook::low_level::emulate_default_handler(origin.signal);
                std::process::exit(128 + origin.signal);
            };
            if matches!(origin.cause, Cause::Kernel) {
                continue;
            }
            let sig = match origin.signal {
                SIGINT => Signal::INT,
                _ => Signal::TERM,
            };
            // The target is never reaped while it is set (see `wait`), so `pid` is still the
            // application's, as a zombie at worst.
            let _ = kill_process(pid, sig);
        }
    });
}

impl App {
    /// The application's stderr pipe, when it has one.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Waits for the application's end. The forwarding stops before the process is reaped, so
    /// that no signal can reach another process that reuses its id.
    pub fn wait(mut self) -> Result<End> {
        if let Some(pid) = Pid::from_raw(self.child.id() as i32) {
            loop {
                match waitid(
                    WaitId::Pid(pid),
                    WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
                ) {
                    Err(rustix::io::Errno::INTR) => continue,
                    Ok(_) => break,
                    Err(e) => return Err(e).context("cannot wait for the application"),
                }
            }
        }
        *self.target.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let status = self
            .child
            .wait()
            .context("cannot wait for the application")?;
        Ok(End::from(status))
    }
}

/// Ends krphase as the application ended: the same exit status, or death by the same signal
/// (the shell then reports it alike).
pub fn end_like(end: End) -> ! {
    if let End::Signalled(n) = end {
        let _ = signal_hook::low_level::emulate_default_handler(n);
    }
    std::process::exit(end.shell_status())
}
