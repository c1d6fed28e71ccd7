//! The whole command tree's help, completions and man pages: help fits the piped width, every
//! argument is described, every subcommand shows an example, and every generator writes
//! something for every shell and page.

use clap::{Command, CommandFactory, ValueEnum};
use clap_complete::Shell;

use super::args::Cli;
use super::width::{PIPED_MAX, piped_width};

/// Every command of the tree, hidden ones included, with its full name (`krphase export
/// perfetto`); the `help` subcommand clap adds is left out.
fn walk(cmd: &Command, prefix: &str, out: &mut Vec<(String, Command)>) {
    let name = if prefix.is_empty() {
        cmd.get_name().to_string()
    } else {
        format!("{prefix} {}", cmd.get_name())
    };
    out.push((name.clone(), cmd.clone()));
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        walk(sub, &name, out);
    }
}

/// The tree as `krphase` builds it for piped stdout, built (globals propagated).
fn tree() -> Vec<(String, Command)> {
    let mut cmd = Cli::command().term_width(piped_width(None));
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out);
    out
}

/// Lines of `text` wider than `max` columns, as "width: line". A line's width is its length
/// in bytes: that is what byte-counting tools (`awk length` in the C locale, `cut -c`, many
/// linters) report, and never less than its characters, so a line that passes fits either way.
fn wide_lines(text: &str, max: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.len() > max)
        .map(|l| format!("{} bytes, {} chars: {l}", l.len(), l.chars().count()))
        .collect()
}

#[test]
fn every_help_fits_the_piped_width() {
    let mut bad = Vec::new();
    for (name, mut cmd) in tree() {
        for (kind, text) in [
            ("-h", cmd.render_help().to_string()),
            ("--help", cmd.render_long_help().to_string()),
        ] {
            for line in wide_lines(&text, PIPED_MAX) {
                bad.push(format!("{name} {kind}: {line}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "help lines over {PIPED_MAX} columns:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_argument_is_described() {
    let mut bad = Vec::new();
    for (name, cmd) in tree() {
        let undescribed = cmd.get_arguments().filter(|a| {
            let id = a.get_id().as_str();
            // clap's own --help and --version carry clap's text.
            let own = id != "help" && id != "version";
            own && a.get_help().is_none_or(|h| h.to_string().trim().is_empty())
        });
        bad.extend(undescribed.map(|a| format!("{name}: {}", a.get_id())));
    }
    assert!(
        bad.is_empty(),
        "arguments without help:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_subcommand_has_about_and_a_krphase_example() {
    let mut bad = Vec::new();
    for (name, cmd) in tree() {
        if cmd.get_about().is_none() {
            bad.push(format!("{name}: no about"));
        }
        let after = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let example = after.split_once("Example").map(|(_, rest)| rest);
        // The example runs the command it documents (a parent may show any of its children).
        if !example.is_some_and(|e| e.contains(&format!("{name} "))) {
            bad.push(format!(
                "{name}: no \"Example\" running `{name}` in its after-help"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn piped_width_is_at_most_100_and_honours_a_narrower_columns() {
    assert_eq!(piped_width(None), 100);
    assert_eq!(piped_width(Some("250")), 100);
    assert_eq!(piped_width(Some("72")), 72);
    assert_eq!(piped_width(Some("0")), 100);
    assert_eq!(piped_width(Some("wide")), 100);
}

#[test]
fn completions_are_written_for_every_shell() {
    for &shell in Shell::value_variants() {
        let mut cmd = Cli::command();
        let mut out = Vec::new();
        super::completions::write_completions(shell, &mut cmd, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Each script knows the subcommands, nested ones included.
        for word in ["import-log", "perfetto", "completions"] {
            assert!(
                text.contains(word),
                "{shell}: {word} missing from the completions"
            );
        }
    }
}

#[test]
fn man_pages_cover_every_visible_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let written = super::man::write_pages(Cli::command(), dir.path()).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let expected: Vec<String> = tree()
        .iter()
        .filter(|(_, c)| !c.is_hide_set())
        .map(|(name, _)| format!("{}.1", name.replace(' ', "-")))
        .collect();
    assert_eq!(sorted(names), sorted(expected));
    for path in &written {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{}: not roff",
            path.display()
        );
        assert!(
            text.contains("\n.SH EXAMPLE\n"),
            "{}: no example",
            path.display()
        );
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}
