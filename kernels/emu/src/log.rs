//! SDK-style log lines on stderr with glog's prefix, as the SDK writes them
//! (`I20250709 16:40:57.435762 140032605917504 agent.cpp:499] `: severity, local date and time
//! without a zone, the `pthread_self` thread id, never the pid), filtered by
//! `ROCPROFILER_LOG_LEVEL` (default warning) as the SDK does. Some SDK builds print no year
//! (`I0709 16:40:57.435762 …`): `KRPHASE_EMU_LOG_YEAR=0` selects that form (default 1, with).

use std::io::Write;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
    Fatal = 4,
}

impl Level {
    fn letter(self) -> char {
        match self {
            Level::Trace | Level::Info => 'I',
            Level::Warning => 'W',
            Level::Error => 'E',
            Level::Fatal => 'F',
        }
    }
}

/// Parses a `ROCPROFILER_LOG_LEVEL` value: a name or a number (0 trace .. 4 fatal).
pub fn parse_level(s: &str) -> Option<Level> {
    match s.trim().to_ascii_lowercase().as_str() {
        "trace" | "0" => Some(Level::Trace),
        "info" | "1" => Some(Level::Info),
        "warning" | "warn" | "2" => Some(Level::Warning),
        "error" | "3" => Some(Level::Error),
        "fatal" | "4" => Some(Level::Fatal),
        _ => None,
    }
}

fn min_level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| match std::env::var("ROCPROFILER_LOG_LEVEL") {
        Ok(v) if !v.trim().is_empty() => parse_level(&v).unwrap_or_else(|| {
            eprintln!("krphase-emu: ROCPROFILER_LOG_LEVEL={v:?} is not a log level; using warning");
            Level::Warning
        }),
        _ => Level::Warning,
    })
}

/// Whether the prefix carries the year (`KRPHASE_EMU_LOG_YEAR`, default yes).
fn with_year() -> bool {
    static YEAR: OnceLock<bool> = OnceLock::new();
    *YEAR.get_or_init(|| match std::env::var("KRPHASE_EMU_LOG_YEAR") {
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" | "1" | "true" | "on" | "yes" => true,
            "0" | "false" | "off" | "no" => false,
            _ => {
                eprintln!(
                    "krphase-emu: KRPHASE_EMU_LOG_YEAR={v:?} is not 0 or 1; printing the year"
                );
                true
            }
        },
        Err(_) => true,
    })
}

/// The calling thread's id as glog prints it: `pthread_self()` as an integer (an address-sized
/// number on glibc, unrelated to the pid or `gettid`).
fn glog_thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions and always succeeds.
    unsafe { libc::pthread_self() as u64 }
}

pub fn enabled(level: Level) -> bool {
    level >= min_level()
}

fn prefix(level: Level, file: &str, line: u32) -> String {
    prefix_as(level, file, line, with_year())
}

fn prefix_as(level: Level, file: &str, line: u32, year: bool) -> String {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    // SAFETY: gettimeofday writes into our timeval; the timezone argument may be NULL.
    unsafe { libc::gettimeofday(&mut tv, std::ptr::null_mut()) };
    // SAFETY: an all-zero `tm` is a valid value to be overwritten.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads our time_t and writes our tm; both outlive the call.
    unsafe { libc::localtime_r(&tv.tv_sec, &mut tm) };
    let year = if year {
        format!("{:04}", tm.tm_year + 1900)
    } else {
        String::new()
    };
    format!(
        "{}{year}{:02}{:02} {:02}:{:02}:{:02}.{:06} {} {}:{}] ",
        level.letter(),
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tv.tv_usec,
        glog_thread_id(),
        file,
        line
    )
}

/// Writes one log line (one `write` call, so lines from threads do not interleave).
pub fn log(level: Level, file: &str, line: u32, msg: &str) {
    if !enabled(level) {
        return;
    }
    let text = format!("{}{}\n", prefix(level, file, line), msg);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Logs `msg` once per `flag` (warn-once lines).
pub fn once(flag: &std::sync::atomic::AtomicBool, level: Level, file: &str, line: u32, msg: &str) {
    if !flag.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log(level, file, line, msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_number() {
        assert_eq!(parse_level("INFO"), Some(Level::Info));
        assert_eq!(parse_level("warning"), Some(Level::Warning));
        assert_eq!(parse_level("0"), Some(Level::Trace));
        assert_eq!(parse_level("loud"), None);
    }

    #[test]
    fn prefix_is_glogs_with_and_without_the_year() {
        let with = prefix_as(Level::Warning, "queue_hooks.cpp", 512, true);
        let re = regex::Regex::new(
            r"^W(\d{4})\d{4} \d{2}:\d{2}:\d{2}\.\d{6} (\d+) queue_hooks\.cpp:512\] $",
        )
        .unwrap();
        let caps = re.captures(&with).unwrap_or_else(|| panic!("{with:?}"));
        assert!(caps[1].parse::<i32>().unwrap() >= 2024, "{with:?}");
        // The thread id is pthread_self, never the pid.
        let tid: u64 = caps[2].parse().unwrap();
        assert_eq!(tid, glog_thread_id());
        assert_ne!(tid, u64::from(std::process::id()), "{with:?}");
        let without = prefix_as(Level::Info, "agent.cpp", 499, false);
        let re =
            regex::Regex::new(r"^I\d{4} \d{2}:\d{2}:\d{2}\.\d{6} \d+ agent\.cpp:499\] $").unwrap();
        assert!(re.is_match(&without), "{without:?}");
    }
}
