//! `krphase`'s help, examples, completions and man pages through the built binary: piped help
//! is at most 100 columns whatever `COLUMNS` says, the examples the help shows run as written
//! (all but those that need outside input: an SDK log, a rocprofv3-benchmark database, two
//! builds' measurements, and the demo, which the demo test runs), and `completions` / `man` write
//! what they promise.

use krphase_tests::{artifacts, output_text, scratch_dir};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Every subcommand path of the tree (`["export", "perfetto"]`), the root as `[]`.
fn command_paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    out.push(prefix.to_vec());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        command_paths(sub, &path, out);
    }
}

/// `krphase ARGS` with stdout and stderr piped.
fn krphase(args: &[String], columns: Option<&str>) -> Output {
    let mut cmd = Command::new(&artifacts().krphase);
    cmd.args(args).stdin(Stdio::null());
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    cmd.output().expect("run krphase")
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn piped_help_is_at_most_100_columns_and_follows_a_narrower_columns() {
    let mut paths = Vec::new();
    command_paths(&krphase_analyzer::cli::command(), &[], &mut paths);
    for path in paths {
        for (flag, columns, max) in [
            ("--help", None, 100),
            ("--help", Some("250"), 100),
            ("-h", Some("250"), 100),
            ("--help", Some("72"), 72),
        ] {
            let mut args = path.clone();
            args.push(flag.into());
            let o = krphase(&args, columns);
            assert!(o.status.success(), "{args:?}: {}", output_text(&o));
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                widest(&text) <= max,
                "krphase {args:?} with COLUMNS={columns:?}: {} columns (max {max}):\n{text}",
                widest(&text)
            );
        }
    }
}

/// The command lines of the example of the subcommand at `path`, continuation lines joined,
/// one command a line.
fn example(path: &[&str]) -> String {
    let mut cmd = krphase_analyzer::cli::command();
    for name in path {
        cmd = cmd.find_subcommand(name).expect("subcommand").clone();
    }
    let after = cmd.get_after_help().expect("an example").to_string();
    let (_, text) = after.split_once(":\n").expect("Example...:\\n");
    let joined = text.replace("\\\n", " ");
    let lines = joined
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    lines
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `line` in `dir` through `sh -e`, with krphase and krphase-emu on PATH and HOME in `dir`.
fn run_example(dir: &Path, line: &str) -> Output {
    let a = artifacts();
    let path = format!(
        "{}:{}",
        a.profile_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .args(["-ec", line])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .expect("run sh")
}

#[test]
fn the_examples_run_as_written() {
    let dir = scratch_dir("cli-examples");
    let must_succeed: &[&[&str]] = &[
        &["gen-synthetic"],
        // On the emulator, drive mode and under the rocprofv3 stand-in; it writes the `out/`
        // that the import example imports.
        &["run"],
        &["import"],
        &["runs"],
        &["report"],
        &["export", "perfetto"],
        &["export", "parquet"],
        &["plot"],
        &["completions"],
        &["man"],
        // On the emulator (about 30 s); it writes the CSV the next example imports.
        &["bench"],
        &["import-harness"],
    ];
    for path in must_succeed {
        let line = example(path);
        // The import example imports the phase files a run leaves (`krphase-*.krp`): the
        // synthetic file stands in for one.
        if path == &["import"] {
            std::fs::copy(dir.join("synth.krp"), dir.join("krphase-1.krp")).unwrap();
        }
        let o = run_example(&dir, &line);
        assert!(o.status.success(), "{line}: {}", output_text(&o));
    }
    assert!(dir.join("out/krphase.db").is_file());
    assert!(dir.join("trace.pftrace").is_file());
    assert!(dir.join("krphase-parquet/_krphase.json").is_file());
    assert!(dir.join(".local/share/man/man1/krphase.1").is_file());
    let bash = dir.join(".local/share/bash-completion/completions/krphase");
    assert!(std::fs::metadata(bash).unwrap().len() > 0);
    // The doctor's exit code is its verdict (1: a trap would lose the run); either way it ran.
    let line = example(&["doctor"]);
    let o = run_example(&dir, &line);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{line}: {}",
        output_text(&o)
    );
    assert!(!o.stdout.is_empty(), "{line}: {}", output_text(&o));
}

#[test]
fn completions_and_man_pages_through_the_binary() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = krphase(&["completions".into(), shell.into()], None);
        assert!(o.status.success(), "{shell}: {}", output_text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("import-log"),
            "{shell}: {}",
            output_text(&o)
        );
    }
    let o = krphase(&["man".into()], None);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(".TH"),
        "{}",
        output_text(&o)
    );
    let dir = scratch_dir("cli-man");
    let out = dir.join("man1");
    let o = krphase(
        &["man".into(), "--out-dir".into(), out.display().to_string()],
        None,
    );
    assert!(o.status.success(), "{}", output_text(&o));
    for page in [
        "krphase.1",
        "krphase-import.1",
        "krphase-export-perfetto.1",
        "krphase-man.1",
    ] {
        let len = std::fs::metadata(out.join(page))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 0, "{page} missing or empty: {}", output_text(&o));
    }
    // A hidden subcommand gets no page.
    assert!(!out.join("krphase-gen-synthetic.1").exists());
    let o = krphase(&["completions".into(), "tcsh".into()], None);
    assert!(!o.status.success(), "an unknown shell is refused");
}
