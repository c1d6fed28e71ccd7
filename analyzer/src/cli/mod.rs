//! The `krphase` command line: its arguments ([`args`]), the help texts several subcommands share
//! ([`shared`]), the width help is wrapped to ([`width`]), and the shell completions and man pages
//! generated from the same definition ([`completions`], [`man`]).

pub mod args;
pub mod completions;
pub mod man;
pub mod shared;
pub mod width;

#[cfg(test)]
mod help_tests;

use clap::CommandFactory;

/// The whole command tree, with its help width set for where this process's stdout goes.
pub fn command() -> clap::Command {
    width::apply(args::Cli::command())
}
