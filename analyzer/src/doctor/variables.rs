//! The environment variables the run depends on: `KRPHASE_*` names nobody reads (a misspelled
//! setting is ignored), values libkrphase.so would refuse (it then declines and records nothing),
//! and the SDK's log level (below info there are no SDK log lines to join to the run).

use super::finding::Finding;
use krphase::config::{from_env, unknown_with_nearest};
use std::collections::BTreeMap;

pub fn check(env: &BTreeMap<String, String>) -> Vec<Finding> {
    let mut out: Vec<Finding> = unknown_with_nearest(env.keys().map(String::as_str))
        .into_iter()
        .map(|(name, nearest)| {
            Finding::warning(
                format!("{name} is not a krphase variable: libkrphase.so ignores it"),
                format!("did you mean {nearest}? rename it"),
            )
        })
        .collect();
    match from_env(&|k| env.get(k).cloned()) {
        Err(m) => out.push(Finding::trap(
            format!("libkrphase.so would decline and record nothing: {m}"),
            "correct the value (docs/user-guide.md lists each variable)",
        )),
        Ok(None) => out.push(Finding::trap(
            "KRPHASE_DISABLE is set: libkrphase.so will not record",
            "unset KRPHASE_DISABLE",
        )),
        Ok(Some(c)) => out.extend(c.pmc_warning.map(|w| {
            Finding::warning(
                // The warning names its variable (KRPHASE_PMC or KRPHASE_PMC_REFERENCE).
                w,
                "correct KRPHASE_PMC / KRPHASE_PMC_REFERENCE or unset them",
            )
        })),
    }
    out.extend(log_level(
        env.get("ROCPROFILER_LOG_LEVEL").map(String::as_str),
    ));
    out
}

fn log_level(level: Option<&str>) -> Option<Finding> {
    let verbose = level.is_some_and(|l| {
        matches!(
            l.trim().to_ascii_lowercase().as_str(),
            "info" | "trace" | "1" | "0"
        )
    });
    if verbose {
        return None;
    }
    let now = match level {
        Some(l) => format!("ROCPROFILER_LOG_LEVEL={l}"),
        None => "ROCPROFILER_LOG_LEVEL is unset (the SDK logs warnings only)".to_string(),
    };
    Some(Finding::warning(
        format!(
            "{now}: the SDK prints no kernel-replay info lines, so there is no SDK log to join \
             to the run (krphase import-log)"
        ),
        "export ROCPROFILER_LOG_LEVEL=info and keep stderr in a file",
    ))
}
