//! Opening the output file: its path from the `KRPHASE_OUTPUT` template (`output.rs`), its
//! directory, and the recorder writing it; and the fork child's own file.

use crate::config::{Config, OnFull};
use crate::recorder::{self, Recorder};
use crate::{say, sys, tool};
use krphase_format::event::Notice;
use krphase_format::{Header, Record};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The output file of process `pid`.
pub fn output_path(cfg: &Config, pid: u32, hostname: &str) -> Result<PathBuf, String> {
    let vars = crate::output::Vars {
        pid,
        ppid: sys::getppid(),
        hostname,
        env: &env,
    };
    crate::output::resolve(
        cfg.output_template.as_deref(),
        cfg.rocprof_output.as_deref(),
        &vars,
    )
}

/// Creates the file's directory and the recorder writing it (header first).
pub fn open_recorder(
    path: &Path,
    header: &Header,
    on_full: OnFull,
) -> Result<Arc<Recorder>, Declined> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        say(&format!(
            "cannot create output directory {}: {e}; not recording",
            dir.display()
        ));
        return Err(Declined);
    }
    Recorder::create(path.to_path_buf(), header, on_full).map_err(|e| {
        declined(&format!(
            "cannot write {}: {e}; not recording",
            path.display()
        ))
    })
}

/// Makes the fork child's recorder the one `fork_child_recorder` builds.
pub fn set_fork_factory() {
    recorder::set_fork_factory(Box::new(fork_child_recorder));
}

/// A fork child writes its own file, named from the template with its own pid.
fn fork_child_recorder() -> Option<Arc<Recorder>> {
    let t = tool::get()?;
    let pid = sys::getpid();
    let mut h = t.header.clone();
    let parent = h.pid;
    h.pid = pid;
    h.ppid = sys::getppid();
    h.boottime_ns = sys::boottime_ns();
    h.realtime_ns = sys::realtime_ns();
    h.mode = t.mode();
    let path = output_path(&t.cfg, pid, &h.hostname)
        .map_err(|m| declined(&m))
        .ok()?;
    h.output_path = path.display().to_string();
    let rec = open_recorder(&path, &h, t.cfg.on_full).ok()?;
    // First record of the child's file: whose fork it is (recorded directly: this runs while
    // the calling thread's buffer is being re-attached).
    let ts = sys::boottime_ns();
    rec.send_records(&[Record::notice(
        sys::gettid(),
        ts,
        Notice::ForkChild,
        u64::from(parent),
        0,
    )]);
    Some(rec)
}
