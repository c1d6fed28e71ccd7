//! The width help is wrapped to: the terminal's when stdout is one; otherwise at most
//! [`PIPED_MAX`] columns (a pager, a file or a man page stays readable), narrower if `COLUMNS`
//! says so.

use std::io::IsTerminal;

/// The widest help line when stdout is not a terminal.
pub const PIPED_MAX: usize = 100;

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

/// The help width when stdout is not a terminal, given `COLUMNS`: [`PIPED_MAX`], or `COLUMNS`
/// where that is a narrower positive number.
pub fn piped_width(columns: Option<&str>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .map_or(PIPED_MAX, |c| c.min(PIPED_MAX))
}
