//! The order in which the SDK will configure the tools of the command `krphase doctor` checks,
//! by the SDK's `find_clients()` rule (as `registration.cpp` orders its clients):
//! configure functions handed to `rocprofiler_force_configure` first (only the running process
//! shows those), then the `ROCP_TOOL_LIBRARIES` entries the SDK keeps, in order, then the tools
//! already in the process — the preloaded libraries — through the global lookup. A library both
//! listed and preloaded is configured once, at its list place. Initialize and finalize follow the
//! same order; of two tools claiming kernel replay, the first configured wins.

use super::rocprofv3::Rocprofv3;
use super::tool_list::{ROCPROFV3_TOOL, sdk_entries};
use std::collections::BTreeMap;

/// rocprofv3.py appends the SDK library after its tool in `LD_PRELOAD`; it holds no tool.
const SDK_LIBRARY: &str = "librocprofiler-sdk.so";

/// One client the SDK will configure, and how it finds it.
#[derive(Debug, PartialEq, Eq)]
pub struct Client {
    pub library: String,
    pub found_by: String,
}

/// The tool-list value and the `LD_PRELOAD` value the application will see: under rocprofv3,
/// its tool appended to both, `--preload` entries put first, and `librocprofiler-sdk.so` last in
/// `LD_PRELOAD` (rocprofv3.py `run()` @01610ac2).
fn composed(env: &BTreeMap<String, String>, rv3: Option<&Rocprofv3>) -> (String, Vec<String>) {
    let get = |k: &str| env.get(k).cloned().unwrap_or_default();
    let split = |v: &str| -> Vec<String> {
        v.split([':', ' '])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let Some(r) = rv3 else {
        return (get("ROCP_TOOL_LIBRARIES"), split(&get("LD_PRELOAD")));
    };
    let list = format!("{}:{ROCPROFV3_TOOL}", get("ROCP_TOOL_LIBRARIES"))
        .trim_matches(':')
        .to_string();
    let mut preload = r.preload.clone();
    preload.extend(split(&get("LD_PRELOAD")));
    preload.push(ROCPROFV3_TOOL.to_string());
    preload.push(SDK_LIBRARY.to_string());
    (list, preload)
}

fn same_library(a: &str, b: &str) -> bool {
    a == b || (a.contains('/') != b.contains('/') && base(a) == base(b))
}

fn base(p: &str) -> &str {
    super::invocation::base(p)
}

/// The clients in configure order.
pub fn clients(env: &BTreeMap<String, String>, rv3: Option<&Rocprofv3>) -> Vec<Client> {
    let (list, preload) = composed(env, rv3);
    let (kept, _) = sdk_entries(&list);
    let mut out: Vec<Client> = kept
        .iter()
        .enumerate()
        .map(|(i, e)| Client {
            library: e.clone(),
            found_by: format!("ROCP_TOOL_LIBRARIES entry {}", i + 1),
        })
        .collect();
    for p in preload.iter().filter(|p| base(p) != SDK_LIBRARY) {
        if out.iter().any(|c| same_library(&c.library, p)) {
            continue;
        }
        let known = base(p) == base(ROCPROFV3_TOOL);
        out.push(Client {
            library: p.clone(),
            found_by: if known {
                "preloaded; found by the global lookup".to_string()
            } else {
                "preloaded; a client only if it defines rocprofiler_configure".to_string()
            },
        });
    }
    out
}

/// The lines `krphase doctor` prints.
pub fn lines(env: &BTreeMap<String, String>, rv3: Option<&Rocprofv3>) -> Vec<String> {
    let clients = clients(env, rv3);
    let mut out = vec![format!(
        "configure order ({} client(s); the SDK's find_clients rule; tools that call \
         rocprofiler_force_configure, seen only in the running process, come before these):",
        clients.len()
    )];
    if clients.is_empty() {
        out.push("  (none: no tool will be configured)".to_string());
    }
    for (i, c) in clients.iter().enumerate() {
        out.push(format!("  {}. {}  ({})", i + 1, c.library, c.found_by));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &[(&str, &str)]) -> BTreeMap<String, String> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn under_rocprofv3_the_listed_tool_goes_first_and_its_tool_second() {
        let e = env(&[("ROCP_TOOL_LIBRARIES", "/p/libkrphase.so")]);
        let r = Rocprofv3::default();
        let got: Vec<String> = clients(&e, Some(&r))
            .into_iter()
            .map(|c| c.library)
            .collect();
        assert_eq!(got, ["/p/libkrphase.so", ROCPROFV3_TOOL]);
    }

    #[test]
    fn the_dropped_last_entry_is_not_configured_unless_preloaded() {
        let e = env(&[
            ("ROCP_TOOL_LIBRARIES", "/s/sample.so:/p/libkrphase.so"),
            ("LD_PRELOAD", "/q/other.so"),
        ]);
        let got = clients(&e, None);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].library, "/s/sample.so");
        assert_eq!(got[1].library, "/q/other.so");
        assert!(got[1].found_by.contains("only if it defines"));
    }

    #[test]
    fn a_listed_and_preloaded_library_is_configured_once_at_its_list_place() {
        let e = env(&[
            ("ROCP_TOOL_LIBRARIES", "/a/x.so:/b/y.so:"),
            ("LD_PRELOAD", "/b/y.so"),
        ]);
        let got: Vec<String> = clients(&e, None).into_iter().map(|c| c.library).collect();
        assert_eq!(got, ["/a/x.so", "/b/y.so"]);
    }
}
