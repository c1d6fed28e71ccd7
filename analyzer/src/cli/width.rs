//! The width help is wrapped to: the terminal's when stdout is one; otherwise at most
//! [`PIPED_MAX`] columns (a pager, a file or a man page stays readable), narrower if `COLUMNS`
//! says so.

use std::io::IsTerminal;

/// The width rule is the one terminal tables follow (one definition for both).
pub use crate::render::term_table::{PIPED_MAX, piped_width};

/// Sets `cmd`'s help width for this process's stdout.
///
/// clap's own rule asks the terminal behind stdout, then stderr, then stdin, then `COLUMNS`:
/// with stdout piped and stderr a wide terminal, help would be that terminal's width. Piped
/// help is therefore given an explicit width.
pub fn apply(cmd: clap::Command) -> clap::Command {
    if std::io::stdout().is_terminal() {
        return cmd;
    }
    cmd.term_width(piped_width(std::env::var("COLUMNS").ok().as_deref()))
}
