//! Running one child and measuring it: wall time around spawn + `wait4`, the exit code (signals
//! as negative numbers), and the peak RSS of that child alone from `wait4`'s rusage (the
//! `RUSAGE_CHILDREN` high-water mark never falls, so one big run would set it for all later
//! ones). On Linux the figure also covers descendants the child waited for (the app under a
//! rocprofv3 launcher).

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::db::quantiles::median;

/// What one run of a child gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOutcome {
    /// Exit code, or minus the signal number.
    pub rc: i32,
    pub wall_s: f64,
    /// `ru_maxrss` (KiB on Linux).
    pub peak_rss_kib: u64,
    /// User + system CPU time of the child and the descendants it waited for.
    pub cpu_s: f64,
}

impl RunOutcome {
    pub fn ok(&self) -> bool {
        self.rc == 0
    }
}

/// Where a child's output goes.
#[derive(Debug, Clone, Copy)]
pub enum Sink<'a> {
    Null,
    File(&'a Path),
}

fn stdio(sink: Sink<'_>) -> Result<Stdio> {
    Ok(match sink {
        Sink::Null => Stdio::null(),
        Sink::File(p) => {
            Stdio::from(File::create(p).with_context(|| format!("cannot create {}", p.display()))?)
        }
    })
}

/// Runs `argv` with extra environment (and removed variables), waits with `wait4`.
pub fn run_child(
    argv: &[String],
    env: &[(String, String)],
    env_remove: &[&str],
    stdout: Sink<'_>,
    stderr: Sink<'_>,
) -> Result<RunOutcome> {
    let Some((program, args)) = argv.split_first() else {
        bail!("empty command");
    };
    let mut cmd = Command::new(program);
    // Removed first, so a variable both removed and set ends up set.
    for k in env_remove {
        cmd.env_remove(k);
    }
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(stdio(stdout)?)
        .stderr(stdio(stderr)?);
    let start = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot run {program}"))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = loop {
        // SAFETY: pid is our own unreaped child; status and usage are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        break r;
    };
    let wall_s = start.elapsed().as_secs_f64();
    // `child` is never waited on through std: wait4 reaped it.
    drop(child);
    if waited != pid {
        bail!("wait4 for {program}: {}", std::io::Error::last_os_error());
    }
    let rc = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        -libc::WTERMSIG(status)
    } else {
        -1
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok(RunOutcome {
        rc,
        wall_s,
        peak_rss_kib: usage.ru_maxrss.max(0) as u64,
        cpu_s: tv(usage.ru_utime) + tv(usage.ru_stime),
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub median_s: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub peak_rss_kib: u64,
    pub samples: u32,
    pub failures: u32,
}

/// Warm-up runs (untimed, failures ignored; a negative count means none), then `repeats` timed
/// runs. `run(i, timed)` launches one. Returns the successful timed outcomes' statistics, or
/// `None` when every timed run failed, plus every timed outcome.
pub fn measure(
    warmup: i64,
    repeats: u32,
    mut run: impl FnMut(u32, bool) -> Result<RunOutcome>,
) -> Result<(Option<Stats>, Vec<RunOutcome>)> {
    for i in 0..warmup.max(0) {
        let _ = run(i as u32, false)?;
    }
    let mut timed = Vec::new();
    for i in 0..repeats {
        timed.push(run(i, true)?);
    }
    Ok((stats(&timed), timed))
}

/// The statistics of the successful outcomes among `timed`; `None` when none succeeded.
pub fn stats(timed: &[RunOutcome]) -> Option<Stats> {
    let ok: Vec<&RunOutcome> = timed.iter().filter(|o| o.ok()).collect();
    let failures = (timed.len() - ok.len()) as u32;
    if ok.is_empty() {
        return None;
    }
    let walls: Vec<f64> = ok.iter().map(|o| o.wall_s).collect();
    Some(Stats {
        median_s: median(&walls).unwrap_or(0.0),
        min_s: walls.iter().copied().fold(f64::INFINITY, f64::min),
        max_s: walls.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        peak_rss_kib: ok.iter().map(|o| o.peak_rss_kib).max().unwrap_or(0),
        samples: ok.len() as u32,
        failures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    fn run(argv: &[String]) -> RunOutcome {
        run_child(argv, &[], &[], Sink::Null, Sink::Null).unwrap()
    }

    #[test]
    fn wall_time_covers_the_child() {
        let o = run(&sh("sleep 0.25"));
        assert_eq!(o.rc, 0);
        assert!(o.wall_s >= 0.25, "{}", o.wall_s);
    }

    #[test]
    fn failure_is_reported_as_a_return_code() {
        assert_eq!(run(&sh("exit 3")).rc, 3);
    }

    #[test]
    fn signalled_child_is_reported_negatively() {
        let o = run(&sh("kill -KILL $$"));
        assert_eq!(o.rc, -libc::SIGKILL);
    }

    /// A tiny child that holds 256 MiB resident: dd allocates its block buffer and fills it
    /// from /dev/zero.
    fn big_child() -> Vec<String> {
        ["dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn peak_rss_reflects_the_child() {
        let o = run(&big_child());
        assert_eq!(o.rc, 0);
        assert!(o.peak_rss_kib > 128 * 1024, "{} KiB", o.peak_rss_kib);
    }

    #[test]
    fn peak_rss_is_not_carried_over_from_an_earlier_child() {
        let big = run(&big_child());
        assert!(big.peak_rss_kib > 128 * 1024);
        let small = run(&sh("true"));
        assert!(
            small.peak_rss_kib < 128 * 1024,
            "{} KiB",
            small.peak_rss_kib
        );
    }

    #[test]
    fn environment_is_passed_through() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = run_child(
            &sh("echo \"$KRPHASE_BENCH_TEST_VAR\"; test -z \"$HOME_REMOVED_X\""),
            &[("KRPHASE_BENCH_TEST_VAR".into(), "hello".into())],
            &["HOME_REMOVED_X"],
            Sink::File(&out),
            Sink::Null,
        )
        .unwrap();
        assert_eq!(o.rc, 0);
        assert_eq!(std::fs::read_to_string(out).unwrap(), "hello\n");
    }

    fn fake(rc: i32, wall_s: f64) -> RunOutcome {
        RunOutcome {
            rc,
            wall_s,
            peak_rss_kib: (wall_s * 1000.0) as u64,
            cpu_s: 0.0,
        }
    }

    #[test]
    fn warmup_runs_are_not_counted() {
        let mut launches = Vec::new();
        let (s, timed) = measure(3, 2, |i, t| {
            launches.push((i, t));
            Ok(fake(0, 1.0))
        })
        .unwrap();
        assert_eq!(launches.len(), 5);
        assert_eq!(launches.iter().filter(|(_, t)| !t).count(), 3);
        assert_eq!(s.unwrap().samples, 2);
        assert_eq!(timed.len(), 2);
    }

    #[test]
    fn warmup_can_be_skipped_and_negative_means_none() {
        for w in [0, -1] {
            let mut n = 0;
            measure(w, 2, |_, t| {
                assert!(t);
                n += 1;
                Ok(fake(0, 1.0))
            })
            .unwrap();
            assert_eq!(n, 2);
        }
    }

    #[test]
    fn median_of_the_timed_runs_is_reported() {
        let walls = [3.0, 1.0, 2.0];
        let (s, _) = measure(1, 3, |i, t| {
            Ok(fake(0, if t { walls[i as usize] } else { 99.0 }))
        })
        .unwrap();
        let s = s.unwrap();
        assert_eq!((s.samples, s.failures), (3, 0));
        assert_eq!((s.min_s, s.median_s, s.max_s), (1.0, 2.0, 3.0));
        assert_eq!(
            s.peak_rss_kib, 3000,
            "max over the timed runs, warm-up excluded"
        );
        assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
    }

    #[test]
    fn failed_runs_are_counted_and_excluded() {
        let (s, _) = measure(0, 3, |i, _| {
            Ok(fake(if i == 1 { 1 } else { 0 }, 1.0 + i as f64))
        })
        .unwrap();
        let s = s.unwrap();
        assert_eq!((s.samples, s.failures, s.max_s), (2, 1, 3.0));
    }

    #[test]
    fn a_run_that_always_fails_yields_nothing() {
        let mut n = 0;
        let (s, timed) = measure(0, 4, |_, _| {
            n += 1;
            Ok(fake(-9, 1.0))
        })
        .unwrap();
        assert_eq!(s, None);
        assert_eq!((n, timed.len()), (4, 4));
    }
}
