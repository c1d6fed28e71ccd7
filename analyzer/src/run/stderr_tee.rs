//! The application's stderr, passed through unchanged while a copy is kept for the SDK-log join.
//! When krphase's own stderr is a terminal the application gets a terminal too (a pseudo-terminal
//! in raw output mode, so that no byte is translated), so it keeps its colours and line
//! buffering; otherwise a pipe.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{
    OptionalActions, OutputModes, tcgetattr, tcgetwinsize, tcsetattr, tcsetwinsize,
};

/// The reading end, before the child is spawned.
pub enum Source {
    /// The pseudo-terminal's master; the child gets the returned slave.
    Pty(File),
    /// A pipe: the child's `stderr` handle, taken after spawning.
    Pipe,
}

/// The child's stderr: a pseudo-terminal when krphase's stderr is a terminal and one can be
/// opened, else a pipe.
pub fn child_stderr() -> (Source, Stdio) {
    if std::io::stderr().is_terminal()
        && let Ok((master, slave)) = pty()
    {
        return (Source::Pty(master), Stdio::from(slave));
    }
    (Source::Pipe, Stdio::piped())
}

/// A pseudo-terminal whose slave passes bytes through as written (no `\n` → `\r\n`) and has
/// the size of krphase's terminal.
fn pty() -> std::io::Result<(File, File)> {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(OsStr::from_bytes(name.as_bytes()))?;
    let mut modes = tcgetattr(&slave)?;
    modes.output_modes.remove(OutputModes::OPOST);
    tcsetattr(&slave, OptionalActions::Now, &modes)?;
    if let Ok(size) = tcgetwinsize(std::io::stderr()) {
        let _ = tcsetwinsize(&slave, size);
    }
    Ok((File::from(master), slave))
}

/// The copying thread: every byte read goes to krphase's stderr and to the kept log.
pub struct Tee {
    done: mpsc::Receiver<()>,
    thread: JoinHandle<()>,
}

/// Starts copying `from` to stderr and to a new file at `log`.
pub fn start(from: Box<dyn Read + Send>, log: &Path) -> Result<Tee> {
    let file = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let (tx, done) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("krphase-run-stderr".into())
        .spawn(move || {
            copy(from, file);
            let _ = tx.send(());
        })?;
    Ok(Tee { done, thread })
}

/// Copies until end of file (a pty's master reads EIO once no process holds the slave).
fn copy(mut from: Box<dyn Read + Send>, mut file: File) {
    let mut buf = [0u8; 64 * 1024];
    let mut stderr = std::io::stderr();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // The application's stderr comes first; a full disk must not hide it.
        let _ = stderr.write_all(&buf[..n]);
        let _ = file.write_all(&buf[..n]);
    }
}

impl Tee {
    /// Waits for the copy to reach end of file, at most `grace` after the application ended: a
    /// process it left behind may hold its stderr open, and the run must still finish. Returns
    /// whether everything was copied.
    pub fn finish(self, grace: Duration) -> bool {
        let complete = self.done.recv_timeout(grace).is_ok();
        if complete {
            let _ = self.thread.join();
        }
        complete
    }
}
