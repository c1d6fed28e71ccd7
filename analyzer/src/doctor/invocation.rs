//! The command `krphase doctor -- COMMAND ...` is asked about, as the shell would run it: the
//! variable assignments in front of it, the program and its arguments, and where its stderr
//! goes. A single argument with spaces, or `sh -c STRING`, is a shell command line and is split
//! as the shell would (quotes, `VAR=value` prefixes, `env`, redirections); only its first simple
//! command is examined.

use std::path::Path;

#[derive(Debug, Default)]
pub struct Invocation {
    /// `NAME=value` assignments before the program (also those given to `env`).
    pub assignments: Vec<(String, String)>,
    /// The program and its arguments, redirections removed.
    pub argv: Vec<String>,
    /// The redirection that throws stderr away, as written (`2>/dev/null`, ...).
    pub stderr_discarded: Option<String>,
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh"];
const SEPARATORS: &[&str] = &["|", "||", "&&", ";", "&"];
/// Programs that run the next word as the command.
const WRAPPERS: &[&str] = &["exec", "nohup", "time", "command", "nice"];

/// The file name of a path-like word.
pub fn base(word: &str) -> &str {
    Path::new(word)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(word)
}

/// Parses the words after `--`.
pub fn parse(command: &[String]) -> Result<Invocation, String> {
    let shell_text = match command {
        [one] if one.contains(char::is_whitespace) => Some(one.as_str()),
        [sh, c, text, ..] if SHELLS.contains(&base(sh)) && c == "-c" => Some(text.as_str()),
        _ => None,
    };
    let words: Vec<String> = match shell_text {
        Some(text) => shlex::split(text)
            .ok_or_else(|| format!("cannot split the shell command {text:?} (unbalanced quotes?)"))?
            .into_iter()
            .take_while(|w| !SEPARATORS.contains(&w.as_str()))
            .collect(),
        None => command.to_vec(),
    };
    let mut inv = Invocation::default();
    let rest = if shell_text.is_some() {
        strip_redirections(&words, &mut inv)
    } else {
        words
    };
    split_prefix(rest, &mut inv);
    Ok(inv)
}

fn is_assignment(w: &str) -> Option<(String, String)> {
    let (k, v) = w.split_once('=')?;
    let ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| (k.to_string(), v.to_string()))
}

/// Moves leading assignments, `env` and its options, and wrapper programs out of `words`.
fn split_prefix(words: Vec<String>, inv: &mut Invocation) {
    let mut it = words.into_iter().peekable();
    while let Some(w) = it.peek() {
        if let Some(a) = is_assignment(w) {
            inv.assignments.push(a);
        } else if base(w) == "env" || WRAPPERS.contains(&w.as_str()) {
            let env = base(w) == "env";
            it.next();
            while env && it.peek().is_some_and(|o| o.starts_with('-')) {
                it.next();
            }
            continue;
        } else {
            break;
        }
        it.next();
    }
    inv.argv = it.collect();
}

/// Removes redirections from `words`, noting one that discards stderr.
fn strip_redirections(words: &[String], inv: &mut Invocation) -> Vec<String> {
    let mut out = Vec::new();
    let mut stdout_null = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let Some((op, target)) = redirection(w) else {
            out.push(words[i].clone());
            i += 1;
            continue;
        };
        let (target, used) = match target {
            Some(t) => (t.to_string(), 1),
            None => (words.get(i + 1).cloned().unwrap_or_default(), 2),
        };
        let written = words[i..(i + used).min(words.len())].join(" ");
        let to_null = target == "/dev/null";
        match op {
            "2" | "&" | ">&" if to_null => inv.stderr_discarded = Some(written),
            "2" if target == "&-" || target == "-" => inv.stderr_discarded = Some(written),
            "1" if to_null => stdout_null = true,
            "2" if target == "&1" && stdout_null => {
                inv.stderr_discarded = Some(format!(">/dev/null {written}"));
            }
            _ => {}
        }
        i += used;
    }
    out
}

/// A redirection word: which stream (`1`, `2`, `&` for both, `>&` for both) and its target when
/// it is in the same word.
fn redirection(w: &str) -> Option<(&'static str, Option<&str>)> {
    let forms: &[(&str, &str)] = &[
        ("2>>", "2"),
        ("2>&", "2&"),
        ("2>", "2"),
        ("&>>", "&"),
        ("&>", "&"),
        (">&", ">&"),
        ("1>>", "1"),
        ("1>", "1"),
        (">>", "1"),
        (">", "1"),
        ("<", "<"),
    ];
    for (prefix, op) in forms {
        if let Some(rest) = w.strip_prefix(prefix) {
            let target = (!rest.is_empty()).then_some(rest);
            return Some(match *op {
                // `2>&1`, `2>&-`: the target keeps its `&`.
                "2&" => ("2", Some(&w[2..])),
                "2" => ("2", target),
                "&" => ("&", target),
                ">&" => (">&", target),
                "<" => ("<", target),
                _ => ("1", target),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Invocation {
        parse(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn shell_lines_split_assignments_and_redirections() {
        let i = p(&["ROCP_TOOL_LIBRARIES=a.so:b.so ./app --n 3 2>/dev/null | tee x"]);
        assert_eq!(
            i.assignments,
            [("ROCP_TOOL_LIBRARIES".into(), "a.so:b.so".into())]
        );
        assert_eq!(i.argv, ["./app", "--n", "3"]);
        assert_eq!(i.stderr_discarded.as_deref(), Some("2>/dev/null"));
        let i = p(&["sh", "-c", "env -i X=1 nohup ./app > /dev/null 2>&1"]);
        assert_eq!(i.assignments, [("X".into(), "1".into())]);
        assert_eq!(i.argv, ["./app"]);
        assert_eq!(i.stderr_discarded.as_deref(), Some(">/dev/null 2>&1"));
        for quiet in ["./app &>/dev/null", "./app 2> /dev/null", "./app 2>&-"] {
            assert!(p(&[quiet]).stderr_discarded.is_some(), "{quiet}");
        }
        for kept in ["./app 2>log.txt", "./app 2>&1 | tee l", "./app >/dev/null"] {
            assert!(p(&[kept]).stderr_discarded.is_none(), "{kept}");
        }
    }

    #[test]
    fn argument_vectors_are_taken_as_they_are() {
        let i = p(&["rocprofv3", "--pmc", "A B", "--", "./app"]);
        assert_eq!(i.argv, ["rocprofv3", "--pmc", "A B", "--", "./app"]);
        assert!(i.stderr_discarded.is_none());
        assert!(parse(&["./app 'unclosed".to_string()]).is_err());
    }
}
