//! The output file, the last step of the data's path: its name and opening it. This file holds
//! the path: the `KRPHASE_OUTPUT` template (its placeholders are listed at [`expand`]), its
//! default and the `-N` suffix of a name already taken; `open` opens the file on the recorder's
//! writer thread.

pub(crate) mod open;
pub mod rank;

use std::path::{Path, PathBuf};

/// The file name used when the template names a directory, and by default.
pub const DEFAULT_FILE: &str = "krphase-%hostname%-%pid%.krp";

/// Values a template can use.
pub struct Vars<'a> {
    pub pid: u32,
    pub ppid: u32,
    pub hostname: &'a str,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Expands `%pid%`, `%ppid%`, `%hostname%`, `%rank%` and `%env{NAME}%`.
pub fn expand(template: &str, v: &Vars<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let Some(j) = after.find('%') else {
            return Err(format!("KRPHASE_OUTPUT={template:?}: unmatched '%'"));
        };
        let key = &after[..j];
        match key {
            "pid" => out.push_str(&v.pid.to_string()),
            "ppid" => out.push_str(&v.ppid.to_string()),
            "hostname" => out.push_str(v.hostname),
            "rank" => out.push_str(&rank::raw(v.env).map_or_else(|| "0".into(), |(_, r)| r)),
            k if k.starts_with("env{") && k.ends_with('}') => {
                let name = &k[4..k.len() - 1];
                match (v.env)(name) {
                    Some(val) => out.push_str(&val),
                    None => {
                        return Err(format!(
                            "KRPHASE_OUTPUT={template:?}: %env{{{name}}}% is not set"
                        ));
                    }
                }
            }
            _ => {
                return Err(format!(
                    "KRPHASE_OUTPUT={template:?}: unknown placeholder %{key}%"
                ));
            }
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The output file for this process: the template (a trailing `/` or an existing directory gets
/// the default file name), else `$ROCPROF_OUTPUT_PATH/` under rocprofv3, else the working
/// directory.
pub fn resolve(
    template: Option<&str>,
    rocprof_output: Option<&str>,
    v: &Vars<'_>,
) -> Result<PathBuf, String> {
    let raw = match (template, rocprof_output) {
        (Some(t), _) => t.to_string(),
        (None, Some(dir)) => format!("{}/{DEFAULT_FILE}", dir.trim_end_matches('/')),
        (None, None) => DEFAULT_FILE.to_string(),
    };
    let mut s = expand(&raw, v)?;
    if s.ends_with('/') || Path::new(&s).is_dir() {
        s = format!("{}/{}", s.trim_end_matches('/'), expand(DEFAULT_FILE, v)?);
    }
    Ok(PathBuf::from(s))
}

/// `path` with `-tag` before its extension (`run.krp` → `run-tag.krp`, `out` → `out-tag`):
/// the name a fork child or a second run takes instead of an existing file.
pub fn with_suffix(path: &Path, tag: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let new = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{tag}.{ext}"),
        _ => format!("{name}-{tag}"),
    };
    path.with_file_name(new)
}

#[cfg(test)]
mod tests {
    #[test]
    fn suffixes_go_before_the_extension() {
        assert_eq!(
            with_suffix(Path::new("d/run.krp"), "7"),
            PathBuf::from("d/run-7.krp")
        );
        assert_eq!(with_suffix(Path::new("out"), "1"), PathBuf::from("out-1"));
        assert_eq!(
            with_suffix(Path::new(".hidden"), "2"),
            PathBuf::from(".hidden-2")
        );
    }

    use super::*;

    fn vars(env: &dyn Fn(&str) -> Option<String>) -> Vars<'_> {
        Vars {
            pid: 42,
            ppid: 7,
            hostname: "h1",
            env,
        }
    }

    #[test]
    fn placeholders_expand() {
        let env = |k: &str| match k {
            "SLURM_PROCID" => Some("3".to_string()),
            "JOB" => Some("j9".to_string()),
            _ => None,
        };
        let v = vars(&env);
        assert_eq!(
            expand("out/%hostname%-%pid%-%ppid%-r%rank%-%env{JOB}%.krp", &v).unwrap(),
            "out/h1-42-7-r3-j9.krp"
        );
        assert!(expand("%env{NOPE}%", &v).unwrap_err().contains("NOPE"));
        assert!(expand("%bogus%", &v).unwrap_err().contains("%bogus%"));
        assert!(expand("50%", &v).unwrap_err().contains("unmatched"));
    }

    #[test]
    fn defaults_and_directories() {
        let env = |_: &str| None;
        let v = vars(&env);
        assert_eq!(
            resolve(None, None, &v).unwrap(),
            PathBuf::from("krphase-h1-42.krp")
        );
        assert_eq!(
            resolve(None, Some("/tmp/rp/"), &v).unwrap(),
            PathBuf::from("/tmp/rp/krphase-h1-42.krp")
        );
        assert_eq!(
            resolve(Some("d/"), None, &v).unwrap(),
            PathBuf::from("d/krphase-h1-42.krp")
        );
        assert_eq!(
            resolve(Some("x-%pid%.krp"), Some("/ignored"), &v).unwrap(),
            PathBuf::from("x-42.krp")
        );
    }
}
