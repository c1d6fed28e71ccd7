//! A rocprofv3 command line's kernel-replay flags, counter groups, output directory and preloads,
//! and the traps in them: `--kernel-replay-beta-enabled` without `--replay-mode kernel` (no kernel
//! replay: rocprofv3 uses application replay and only warns), `--replay-mode kernel` without the
//! beta flag (rocprofv3 refuses to run), kernel replay without counters (refused) or with one
//! counter group (one pass, which the SDK treats as no replay).

use super::finding::Finding;
use super::invocation::base;

/// What a rocprofv3 command line asks for.
#[derive(Debug, Default)]
pub struct Rocprofv3 {
    pub beta: bool,
    pub replay_mode: Option<String>,
    /// `--pmc` groups given on the command line.
    pub pmc_groups: usize,
    /// `-i FILE`: counter groups from a file (how many is not checked here).
    pub input: bool,
    pub output_directory: Option<String>,
    pub preload: Vec<String>,
}

/// Where rocprofv3's own options start in `argv`, if it runs rocprofv3 (also `python3
/// rocprofv3.py` and the emulator's stand-in, `krphase-emu rocprofv3`).
fn options_start(argv: &[String]) -> Option<usize> {
    let first = base(argv.first()?);
    let second = argv.get(1).map(|s| base(s));
    if first == "rocprofv3" || first == "rocprofv3.py" {
        Some(1)
    } else if (first.starts_with("python") && second == Some("rocprofv3.py"))
        || (first == "krphase-emu" && second == Some("rocprofv3"))
    {
        Some(2)
    } else {
        None
    }
}

fn bool_word(w: &str) -> Option<bool> {
    match w.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// An option's value: inline (`--name=value`) or the next word (then skipped).
fn take(inline: Option<&str>, next: Option<&str>, i: &mut usize) -> Option<String> {
    match inline {
        Some(v) => Some(v.to_string()),
        None => {
            *i += 1;
            next.map(str::to_string)
        }
    }
}

/// Parses rocprofv3's options (up to `--`), or `None` when `argv` does not run rocprofv3.
pub fn parse(argv: &[String]) -> Option<Rocprofv3> {
    let start = options_start(argv)?;
    let opts: Vec<&str> = argv[start..]
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .collect();
    let mut r = Rocprofv3::default();
    let mut i = 0;
    while i < opts.len() {
        let (name, inline) = match opts[i].split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (opts[i], None),
        };
        let next = opts.get(i + 1).copied();
        match name {
            "--kernel-replay-beta-enabled" => {
                r.beta = match inline.map(bool_word) {
                    Some(v) => v.unwrap_or(true),
                    None => match next.and_then(bool_word) {
                        Some(v) => {
                            i += 1;
                            v
                        }
                        None => true,
                    },
                }
            }
            "--replay-mode" => r.replay_mode = take(inline, next, &mut i),
            "--pmc" => r.pmc_groups += 1,
            "-i" | "--input" => r.input = take(inline, next, &mut i).is_some(),
            "-d" | "--output-directory" => r.output_directory = take(inline, next, &mut i),
            "--preload" => {
                while let Some(v) = opts.get(i + 1).filter(|v| !v.starts_with('-')) {
                    r.preload.extend(v.split(':').map(str::to_string));
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some(r)
}

/// The traps in a rocprofv3 command line's kernel-replay flags.
pub fn check(r: &Rocprofv3) -> Vec<Finding> {
    let kernel = r.replay_mode.as_deref() == Some("kernel");
    let mut out = Vec::new();
    if r.beta && !kernel {
        out.push(Finding::trap(
            "rocprofv3 has --kernel-replay-beta-enabled but no --replay-mode kernel: no kernel \
             replay happens (rocprofv3 uses application replay and only prints a warning)",
            "add --replay-mode kernel",
        ));
    }
    if kernel && !r.beta {
        out.push(Finding::trap(
            "rocprofv3 has --replay-mode kernel without --kernel-replay-beta-enabled: rocprofv3 \
             refuses to run (kernel replay is a beta)",
            "add --kernel-replay-beta-enabled",
        ));
    }
    if kernel && r.pmc_groups == 0 && !r.input {
        out.push(Finding::trap(
            "rocprofv3 --replay-mode kernel has no counters: rocprofv3 refuses to run",
            "give the counter groups, one --pmc per group (or -i FILE with pmc_groups)",
        ));
    }
    if kernel && r.beta && r.pmc_groups == 1 && !r.input {
        out.push(Finding::trap(
            "rocprofv3 --replay-mode kernel with one --pmc group asks for one pass, which the \
             SDK treats as no replay",
            "give at least two counter groups (one --pmc per group)",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_and_their_traps() {
        let r = parse(&args(
            "rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled -- app",
        ))
        .unwrap();
        assert_eq!((r.beta, r.pmc_groups), (true, 2));
        assert_eq!(check(&r).len(), 1);
        let r = parse(&args(
            "python3 /opt/rocprofv3.py --replay-mode=kernel --kernel-replay-beta-enabled \
             --pmc A --pmc B -d out --preload /x/libkrphase.so -- app --replay-mode x",
        ))
        .unwrap();
        assert!(check(&r).is_empty(), "{:?}", check(&r));
        assert_eq!(r.output_directory.as_deref(), Some("out"));
        assert_eq!(r.preload, ["/x/libkrphase.so"]);
        let r = parse(&args(
            "krphase-emu rocprofv3 --replay-mode kernel --pmc A -- app",
        ))
        .unwrap();
        assert_eq!(check(&r).len(), 1, "reverse: no beta flag");
        let r = parse(&args(
            "rocprofv3 --replay-mode kernel --kernel-replay-beta-enabled --pmc A -- a",
        ));
        assert_eq!(check(&r.unwrap()).len(), 1, "one group is one pass");
        assert!(parse(&args("./app --replay-mode kernel")).is_none());
    }
}
