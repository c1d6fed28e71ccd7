//! The inputs `import-log` refuses before it looks at any run: an empty file, a binary one, and a
//! text with no kernel-replay line. None of them can say anything about a replay, and storing a
//! row for one would only hide a set-up that printed nothing (the wrong log level, kernel replay
//! not enabled, the wrong stream captured).

use std::path::{Path, PathBuf};

/// How much of the file's start decides whether it is text.
const SNIFF: usize = 64 * 1024;

/// Where to look when a log has nothing the SDK printed about replays.
const DOCTOR_HINT: &str = "run `krphase doctor -- <your command>` to check the set-up";

/// Why a file is not an SDK log this importer can use; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum NotAReplayLog {
    #[error("{}: empty file, not an SDK log; nothing stored ({DOCTOR_HINT})", .0.display())]
    Empty(PathBuf),
    #[error("{}: binary data ({why}), not an SDK log; nothing stored", .path.display())]
    Binary { path: PathBuf, why: String },
    #[error(
        "{}: no kernel-replay lines in its {lines} lines (the SDK prints them to stderr at \
         ROCPROFILER_LOG_LEVEL=info when it replays a kernel); nothing stored ({DOCTOR_HINT})",
        .path.display()
    )]
    NoReplayLines { path: PathBuf, lines: u64 },
}

/// Refuses an empty or binary file, from its bytes.
pub fn check_text(path: &Path, bytes: &[u8]) -> Result<(), NotAReplayLog> {
    if bytes.is_empty() {
        return Err(NotAReplayLog::Empty(path.to_path_buf()));
    }
    binary_reason(&bytes[..bytes.len().min(SNIFF)]).map_or(Ok(()), |why| {
        Err(NotAReplayLog::Binary {
            path: path.to_path_buf(),
            why,
        })
    })
}

/// Refuses a log with no line the importer reads.
pub fn check_replay_lines(path: &Path, lines: u64, records: usize) -> Result<(), NotAReplayLog> {
    if records == 0 {
        return Err(NotAReplayLog::NoReplayLines {
            path: path.to_path_buf(),
            lines,
        });
    }
    Ok(())
}

/// Why `head` is not text: a NUL byte (no log line holds one), or more than one byte in eight
/// that is neither valid UTF-8 nor printable (a stray Latin-1 byte in an application's output
/// stays text).
fn binary_reason(head: &[u8]) -> Option<String> {
    if let Some(at) = head.iter().position(|&b| b == 0) {
        return Some(format!("a NUL byte at offset {at}"));
    }
    let text = String::from_utf8_lossy(head);
    let odd = text
        .chars()
        .filter(|&c| {
            c == char::REPLACEMENT_CHARACTER
                || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x1b'))
        })
        .count();
    let total = text.chars().count();
    (odd * 8 > total).then(|| format!("{odd} of its first {total} characters are not text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_binary_and_text_are_told_apart() {
        let p = Path::new("x.log");
        assert!(matches!(check_text(p, b""), Err(NotAReplayLog::Empty(_))));
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let e = check_text(p, png).unwrap_err().to_string();
        assert!(e.contains("a NUL byte at offset 8"), "{e}");
        let noise: Vec<u8> = (0..4096u32).map(|i| (i * 151 % 255 + 1) as u8).collect();
        let e = check_text(p, &noise).unwrap_err().to_string();
        assert!(e.contains("are not text"), "{e}");
        let latin1 = b"I0709 16:40:00.000000 1 x.cpp:1] caf\xe9 ok\n".repeat(3);
        assert!(check_text(p, &latin1).is_ok());
        assert!(check_text(p, "\x1b[31mcolour\x1b[0m\tok\r\n".as_bytes()).is_ok());
    }

    #[test]
    fn the_refusals_are_one_line_and_point_at_doctor() {
        let p = Path::new("app.stderr.log");
        for e in [
            NotAReplayLog::Empty(p.into()),
            NotAReplayLog::NoReplayLines {
                path: p.into(),
                lines: 12,
            },
        ] {
            let s = e.to_string();
            assert!(
                !s.contains('\n') && s.starts_with("app.stderr.log: "),
                "{s}"
            );
            assert!(
                s.contains("krphase doctor -- ") && s.contains("nothing stored"),
                "{s}"
            );
        }
        assert!(check_replay_lines(p, 3, 1).is_ok());
        let s = check_replay_lines(p, 12, 0).unwrap_err().to_string();
        assert!(s.contains("no kernel-replay lines in its 12 lines"), "{s}");
    }
}
