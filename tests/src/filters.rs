//! Other programs used as independent truth by line: binutils' `c++filt`, and any filter that
//! answers one line per line it is given.

use std::io::Write;
use std::process::{Command, Stdio};

/// `cmd`'s answer, one line per line of `input`; panics unless it exits 0 with as many lines.
pub fn lines_through(cmd: &mut Command, input: &[&str]) -> Vec<String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    let text: String = input.iter().map(|l| format!("{l}\n")).collect();
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(text.as_bytes())
        .expect("write the filter's input");
    let out = child.wait_with_output().expect("wait for the filter");
    assert!(out.status.success(), "{cmd:?}: {}", out.status);
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .expect("UTF-8 output")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), input.len(), "{cmd:?}: one line per input line");
    lines
}

/// Each SDK kernel name (mangled, `.kd`) as binutils' `c++filt` shows it with `(\.kd)$`
/// stripped first, the form rocprofv3 shows.
pub fn cxxfilt(symbols: &[&str]) -> Vec<String> {
    let stripped: Vec<&str> = symbols
        .iter()
        .map(|s| s.strip_suffix(".kd").unwrap_or(s))
        .collect();
    lines_through(&mut Command::new("c++filt"), &stripped)
}
