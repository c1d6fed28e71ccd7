//! SDK-style log lines on stderr, abseil prefix (`I1129 11:30:43.123456 4242 file.cpp:512] `),
//! filtered by `ROCPROFILER_LOG_LEVEL` (default warning) as the SDK does.

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

pub fn enabled(level: Level) -> bool {
    level >= min_level()
}

fn prefix(level: Level, file: &str, line: u32) -> String {
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
    format!(
        "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {} {}:{}] ",
        level.letter(),
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tv.tv_usec,
        crate::clock::thread_id(),
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
    fn prefix_is_abseil_style() {
        let p = prefix(Level::Warning, "queue_hooks.cpp", 512);
        let re =
            regex::Regex::new(r"^W\d{4} \d{2}:\d{2}:\d{2}\.\d{6} \d+ queue_hooks\.cpp:512\] $")
                .unwrap();
        assert!(re.is_match(&p), "{p:?}");
    }
}
