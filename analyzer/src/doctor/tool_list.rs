//! `ROCP_TOOL_LIBRARIES` as the SDK will read it: entries separated by ':' only, and, when the
//! value holds a ':', its last entry dropped (`a.so:libkrphase.so` loads only `a.so`, silently;
//! a trailing ':' keeps every entry). Under rocprofv3 its own tool is appended first, so the
//! dropped entry is rocprofv3's (found anyway, as it is preloaded). Finds the krphase entry and
//! checks that it loads.

use super::finding::Finding;
use super::rocprofv3::Rocprofv3;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// rocprofv3's tool, as rocprofv3 appends it (the install prefix does not matter here).
pub const ROCPROFV3_TOOL: &str = "/opt/rocm/lib/rocprofiler-sdk/librocprofiler-sdk-tool.so";

/// The entries the SDK opens, and the one it drops.
pub fn sdk_entries(value: &str) -> (Vec<String>, Option<String>) {
    if !value.contains(':') {
        let whole = (!value.is_empty()).then(|| value.to_string());
        return (whole.into_iter().collect(), None);
    }
    let mut parts: Vec<&str> = value.split(':').collect();
    let dropped = parts.pop().filter(|p| !p.is_empty()).map(str::to_string);
    let kept = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    (kept, dropped)
}

fn is_krphase(entry: &str) -> bool {
    let name = super::invocation::base(entry);
    name == "libkrphase.so" || name.starts_with("libkrphase.so.")
}

/// A built libkrphase.so to suggest: next to this executable (the build's output directory).
fn suggested_library() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.join("libkrphase.so")))
        .filter(|p| p.is_file())
        .map_or_else(
            || "/path/to/libkrphase.so".to_string(),
            |p| p.display().to_string(),
        )
}

/// Every finding about the tool list. `env` is the command's environment.
pub fn check(env: &BTreeMap<String, String>, rocprofv3: Option<&Rocprofv3>) -> Vec<Finding> {
    let user = env.get("ROCP_TOOL_LIBRARIES").cloned().unwrap_or_default();
    let value = match rocprofv3 {
        Some(_) => format!("{user}:{ROCPROFV3_TOOL}")
            .trim_matches(':')
            .to_string(),
        None => user.clone(),
    };
    let (kept, dropped) = sdk_entries(&value);
    let mut out = separators(&kept);
    if let Some(d) = dropped.as_deref().filter(|_| rocprofv3.is_none()) {
        out.push(dropped_entry(&user, d));
    }
    for e in kept.iter().filter(|e| !is_krphase(e) && e.contains('/')) {
        if !Path::new(e).exists() && !e.contains([' ', ',']) {
            out.push(Finding::trap(
                format!(
                    "ROCP_TOOL_LIBRARIES entry {e} does not exist: the SDK aborts when it cannot \
                     open an entry"
                ),
                "remove the entry or correct its path",
            ));
        }
    }
    match kept.iter().find(|e| is_krphase(e)) {
        Some(k) => out.extend(loads(k)),
        None if dropped.as_deref().is_some_and(is_krphase) => {}
        None => out.push(absent(env, rocprofv3)),
    }
    out
}

fn separators(kept: &[String]) -> Vec<Finding> {
    kept.iter()
        .filter(|e| e.contains([' ', ',']))
        .map(|e| {
            let fixed: Vec<&str> = e.split([' ', ',']).filter(|p| !p.is_empty()).collect();
            Finding::trap(
                format!(
                    "ROCP_TOOL_LIBRARIES entry {e:?} holds a space or comma: the SDK separates \
                     entries with ':' only, takes it as one path, cannot open it and aborts"
                ),
                format!("ROCP_TOOL_LIBRARIES={}:", fixed.join(":")),
            )
        })
        .collect()
}

fn dropped_entry(user: &str, d: &str) -> Finding {
    let problem = format!(
        "ROCP_TOOL_LIBRARIES={user}: the SDK drops the last entry of a ':'-separated list, so \
         {d} would not be loaded"
    );
    let fix = format!("end the list with ':' (ROCP_TOOL_LIBRARIES={user}:)");
    if is_krphase(d) {
        Finding::trap(
            format!("{problem}: the run would end normally with no .krp and no message"),
            fix,
        )
    } else {
        Finding::warning(problem, fix)
    }
}

/// Whether the krphase entry loads.
fn loads(entry: &str) -> Option<Finding> {
    let path = PathBuf::from(entry);
    let err = if entry.contains('/') && !path.exists() {
        "no such file".to_string()
    } else {
        krphase_ffi::check_tool_library(&path).err()?
    };
    Some(Finding::trap(
        format!("libkrphase.so in ROCP_TOOL_LIBRARIES ({entry}) cannot be loaded: {err}"),
        format!(
            "point ROCP_TOOL_LIBRARIES at a built libkrphase.so (cargo build --release -p \
             krphase-tool), e.g. {}",
            suggested_library()
        ),
    ))
}

/// No krphase entry the SDK opens: preloaded only (a warning), or not there at all (a trap).
fn absent(env: &BTreeMap<String, String>, rocprofv3: Option<&Rocprofv3>) -> Finding {
    let preload = env.get("LD_PRELOAD").cloned().unwrap_or_default();
    let preloaded = preload.split([':', ' ']).any(is_krphase)
        || rocprofv3.is_some_and(|r| r.preload.iter().any(|p| is_krphase(p)));
    let fix = format!("ROCP_TOOL_LIBRARIES={}", suggested_library());
    if preloaded {
        Finding::warning(
            "libkrphase.so is only preloaded, not in ROCP_TOOL_LIBRARIES: the SDK finds it by \
             scanning the process, after any forced and listed tools (the order below)",
            fix,
        )
    } else {
        Finding::trap(
            "libkrphase.so is not in ROCP_TOOL_LIBRARIES: the SDK will not load krphase",
            fix,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_entry_of_a_list_is_dropped() {
        let s = |v: &str| sdk_entries(v);
        assert_eq!(s("a.so"), (vec!["a.so".to_string()], None));
        assert_eq!(
            s("a.so:b.so"),
            (vec!["a.so".to_string()], Some("b.so".to_string()))
        );
        assert_eq!(s("a.so:b.so:"), (vec!["a.so".into(), "b.so".into()], None));
        assert_eq!(s(""), (vec![], None));
    }
}
