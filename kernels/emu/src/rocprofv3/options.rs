//! The stand-in's command line: the options it understands and their parsing.

use std::path::PathBuf;

/// One counter group: counter names.
pub type Group = Vec<String>;

/// What the command line asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    pub groups: Vec<Group>,
    pub replay_mode: Option<String>,
    pub beta_flag: Option<bool>,
    pub input: Option<PathBuf>,
    pub kernel_include_regex: Option<String>,
    /// `--truncate-kernels`: names (and the include regex) in their truncated form.
    pub truncate_kernels: bool,
    /// `--mangled-kernels`: names as the SDK reports them.
    pub mangled_kernels: bool,
    pub output_directory: Option<PathBuf>,
    pub output_file: Option<String>,
    pub output_formats: Vec<String>,
    pub app: Vec<String>,
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "y" | "yes" | "t" | "true" | "on" | "1" => Some(true),
        "n" | "no" | "f" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

fn split_counters(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split([' ', ','])
        .filter(|c| !c.is_empty())
        .map(String::from)
}

/// Parses the stand-in's command line (everything after `rocprofv3`).
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut i = 0;
    let value = |i: &mut usize, name: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .filter(|v| !v.starts_with('-') || v.len() == 1)
            .cloned()
            .ok_or_else(|| format!("{name} needs a value"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        match name {
            "--" => {
                o.app = args[i + 1..].to_vec();
                break;
            }
            "--pmc" => {
                let mut group: Group = inline.iter().flat_map(|v| split_counters(v)).collect();
                while let Some(next) = args.get(i + 1).filter(|n| !n.starts_with('-')) {
                    group.extend(split_counters(next));
                    i += 1;
                }
                if group.is_empty() {
                    return Err("--pmc needs at least one counter".into());
                }
                o.groups.push(group);
            }
            "--kernel-replay-beta-enabled" => {
                o.beta_flag = Some(match inline {
                    Some(v) => parse_bool(&v).ok_or_else(|| {
                        format!("invalid value {v:?} for --kernel-replay-beta-enabled")
                    })?,
                    None => match args.get(i + 1).and_then(|n| parse_bool(n)) {
                        Some(v) => {
                            i += 1;
                            v
                        }
                        None => true,
                    },
                });
            }
            "--replay-mode" => {
                let v = match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                };
                if v != "kernel" && v != "application" {
                    return Err(format!(
                        "--replay-mode {v:?}: expected kernel or application"
                    ));
                }
                o.replay_mode = Some(v);
            }
            "-i" | "--input" => {
                o.input = Some(PathBuf::from(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                }))
            }
            "--kernel-include-regex" => {
                let v = match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                };
                regex::Regex::new(&v)
                    .map_err(|e| format!("--kernel-include-regex {v:?} is not a regex: {e}"))?;
                o.kernel_include_regex = Some(v);
            }
            "--truncate-kernels" => o.truncate_kernels = true,
            "--mangled-kernels" => o.mangled_kernels = true,
            "-d" | "--output-directory" => {
                o.output_directory = Some(PathBuf::from(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                }))
            }
            "-o" | "--output-file" => {
                o.output_file = Some(match inline {
                    Some(v) => v,
                    None => value(&mut i, name)?,
                })
            }
            "--output-format" => {
                let mut formats: Vec<String> = inline.into_iter().collect();
                while let Some(next) = args.get(i + 1).filter(|n| !n.starts_with('-')) {
                    formats.push(next.clone());
                    i += 1;
                }
                for f in formats.iter().flat_map(|f| f.split(',')) {
                    if !["json", "csv", "rocpd"].contains(&f) {
                        return Err(format!(
                            "--output-format {f:?}: the stand-in writes json, csv or rocpd"
                        ));
                    }
                    o.output_formats.push(f.to_string());
                }
            }
            other => return Err(format!("unrecognized option {other:?}")),
        }
        i += 1;
    }
    if o.app.is_empty() {
        return Err("no application given (expected `-- APP ARGS`)".into());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn bad_command_lines_are_refused() {
        for s in [
            "--pmc A",
            "--bogus -- app",
            "--kernel-replay-beta-enabled=maybe -- app",
            "--kernel-include-regex ( -- app",
            "--output-format pftrace -- app",
            "--replay-mode sometimes -- app",
        ] {
            assert!(parse(&args(s)).is_err(), "{s}");
        }
    }
}
