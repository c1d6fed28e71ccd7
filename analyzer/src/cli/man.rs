//! `krphase man`: roff man pages generated from the command tree, `krphase.1` and one
//! `krphase-SUBCOMMAND.1` per visible subcommand (`krphase-export-perfetto.1` for nested ones).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Every page of `cmd`'s tree: (file name, roff text), the top page first. Hidden subcommands
/// and the `help` subcommand get none.
pub fn pages(cmd: clap::Command) -> Result<Vec<(String, Vec<u8>)>> {
    // The reader's `man` reflows roff to its terminal; clap's help width plays no part.
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    collect(&cmd, &mut out)?;
    Ok(out)
}

/// Renders `cmd`'s page, then its visible subcommands' (their names already carry the parent's,
/// `krphase-export`, once the tree is built).
fn collect(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut text = Vec::new();
    man.render(&mut text)
        .with_context(|| format!("rendering the man page of {}", cmd.get_name()))?;
    out.push((man.get_filename(), name_example_section(text)));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, out)?;
    }
    Ok(())
}

/// clap_mangen heads the after-help section "EXTRA"; every krphase after-help is its example, so
/// the page says EXAMPLE, where a man reader looks for one.
fn name_example_section(roff: Vec<u8>) -> Vec<u8> {
    match String::from_utf8(roff) {
        Ok(text) => text
            .replacen("\n.SH EXTRA\n", "\n.SH EXAMPLE\n", 1)
            .into_bytes(),
        Err(e) => e.into_bytes(),
    }
}

/// Writes every page into `dir` (created if missing); returns the paths written.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, text) in pages(cmd)? {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// `krphase man [-d DIR]`: with a directory, every page into it (one line per file);
/// without, `krphase.1` on stdout.
pub fn man_command(out_dir: Option<&Path>) -> Result<()> {
    let cmd = super::command();
    match out_dir {
        Some(dir) => {
            for path in write_pages(cmd, dir)? {
                println!("{}", path.display());
            }
        }
        None => {
            let (_, top) = pages(cmd)?.into_iter().next().context("no man page")?;
            std::io::Write::write_all(&mut std::io::stdout().lock(), &top)?;
        }
    }
    Ok(())
}
