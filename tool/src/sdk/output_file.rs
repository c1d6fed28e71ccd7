//! Opening the output file: its path from the `KRPHASE_OUTPUT` template (`output/mod.rs`), its
//! directory, and the recorder writing it; and the fork child's own file.

use crate::config::{Config, OnFull};
use crate::recorder::{self, Recorder, Starting};
use crate::{events::tool, say, sys};
use krphase_format::event::Notice;
use krphase_format::{Header, Record};
use std::path::{Path, PathBuf};

/// The tool declined; the reason has been printed.
#[derive(Debug)]
pub struct Declined;

/// Prints `msg` and declines.
pub fn declined(msg: &str) -> Declined {
    say(msg);
    Declined
}

/// A variable of the process environment.
pub fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// The output file of process `pid` (`env` reads the environment).
pub fn output_path(
    cfg: &Config,
    pid: u32,
    hostname: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    let vars = crate::output::Vars {
        pid,
        ppid: sys::getppid(),
        hostname,
        env,
    };
    crate::output::resolve(
        cfg.output_template.as_deref(),
        cfg.rocprof_output.as_deref(),
        &vars,
    )
}

/// Starts the recorder writing `path` (the writer thread creates the directory and the file,
/// header first; see `output/open.rs` for which name it takes).
pub fn open_recorder(
    path: &Path,
    header: &Header,
    on_full: OnFull,
) -> Result<&'static Recorder, Declined> {
    Recorder::create(path.to_path_buf(), header, on_full).map_err(|e| cannot_write(path, &e))
}

/// Makes the fork child's recorder the one `fork_child_recorder` builds.
pub fn set_fork_factory() {
    recorder::set_fork_factory(Box::new(fork_child_recorder));
}

/// A fork child writes its own file: the template expanded with its own pid, and when that
/// names the parent's file (a template without `%pid%`), that name with `-PID` added. Runs in
/// the child, under the lock of its current recorder: it starts the recorder without waiting
/// for the file (the caller waits after the lock is released). The environment is read with
/// libc's `getenv` (std's reader takes a lock).
fn fork_child_recorder() -> Option<(Starting, recorder::OpenFailed)> {
    let t = tool::get()?;
    let pid = sys::getpid();
    let mut h = t.header.clone();
    let parent = h.pid;
    h.pid = pid;
    h.ppid = sys::getppid();
    h.boottime_ns = sys::boottime_ns();
    h.realtime_ns = sys::realtime_ns();
    h.mode = t.mode();
    let mut path = output_path(&t.cfg, pid, &h.hostname, &sys::getenv)
        .map_err(|m| declined(&format!("fork child: {m}; not recording")))
        .ok()?;
    if path.as_os_str() == t.header.output_path.as_str() {
        path = crate::output::with_suffix(&path, &pid.to_string());
    }
    h.output_path = path.display().to_string();
    let starting = Recorder::start(path.clone(), &h, t.cfg.on_full)
        .map_err(|e| cannot_write(&path, &e))
        .ok()?;
    // First record of the child's file: whose fork it is (recorded directly: this runs while
    // the calling thread's buffer is being re-attached).
    let ts = crate::clock::now();
    starting.rec.send_records(&[Record::notice(
        sys::gettid(),
        ts,
        Notice::ForkChild,
        u64::from(parent),
        0,
    )]);
    Some((
        starting,
        Box::new(move |e: std::io::Error| {
            cannot_write(&path, &e);
        }),
    ))
}

/// The tool cannot write `path`: says so (and declines).
fn cannot_write(path: &Path, e: &std::io::Error) -> Declined {
    declined(&format!(
        "cannot write {}: {e}; not recording",
        path.display()
    ))
}
