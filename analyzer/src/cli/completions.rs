//! `krphase completions SHELL`: the shell's completion script for the whole command tree.

use std::io::Write;

use anyhow::Result;
use clap_complete::Shell;

/// Writes `shell`'s completion script for `cmd` (named `krphase`) to `out`.
pub fn write_completions(shell: Shell, cmd: &mut clap::Command, out: &mut dyn Write) -> Result<()> {
    let name = cmd.get_name().to_string();
    clap_complete::generate(shell, cmd, name, out);
    out.flush()?;
    Ok(())
}

/// `krphase completions SHELL`: the script on stdout.
pub fn completions_command(shell: Shell) -> Result<()> {
    let mut cmd = super::command();
    write_completions(shell, &mut cmd, &mut std::io::stdout().lock())
}
