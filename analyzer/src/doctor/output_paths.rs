//! Where the run's files go and whether they can be written there and read back: the phase file
//! (`KRPHASE_OUTPUT`, else rocprofv3's output directory, else the working directory, resolved by
//! the tool's own rules) and rocprofv3's `-d` directory.

use super::finding::Finding;
use super::rocprofv3::Rocprofv3;
use krphase::output::{Vars, resolve};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".to_string())
}

/// Whether files can be created in `dir` and the directory listed: creates and removes a probe.
fn usable(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Err("it does not exist".to_string());
    }
    if !dir.is_dir() {
        return Err("it is not a directory".to_string());
    }
    let probe = dir.join(format!(".krphase-doctor-{}", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| format!("it is not writable ({e})"))?;
    let _ = std::fs::remove_file(&probe);
    std::fs::read_dir(dir).map_err(|e| format!("it is not readable ({e})"))?;
    Ok(())
}

/// The nearest existing directory at or above `dir` (what a `mkdir -p` needs to write into).
fn nearest_existing(dir: &Path) -> PathBuf {
    let mut d = dir.to_path_buf();
    while !d.exists() {
        match d.parent() {
            Some(p) if !p.as_os_str().is_empty() => d = p.to_path_buf(),
            _ => return PathBuf::from("."),
        }
    }
    d
}

/// Every finding about output paths. `env` is the command's environment.
pub fn check(env: &BTreeMap<String, String>, rocprofv3: Option<&Rocprofv3>) -> Vec<Finding> {
    let mut out = Vec::new();
    let rocprof_dir = rocprofv3
        .and_then(|r| r.output_directory.clone())
        .or_else(|| env.get("ROCPROF_OUTPUT_PATH").cloned());
    if let Some(d) = rocprofv3.and_then(|r| r.output_directory.as_deref()) {
        let at = nearest_existing(Path::new(d));
        if let Err(why) = usable(&at) {
            out.push(Finding::trap(
                format!(
                    "rocprofv3's output directory {d} (where the phase file goes too) cannot be \
                     created in {}: {why}",
                    at.display()
                ),
                "give -d a directory you can write",
            ));
        }
    }
    let host = hostname();
    let get = |k: &str| env.get(k).cloned();
    let vars = Vars {
        pid: std::process::id(),
        ppid: std::os::unix::process::parent_id(),
        hostname: &host,
        env: &get,
    };
    let template = env.get("KRPHASE_OUTPUT").map(String::as_str);
    let file = match resolve(template, rocprof_dir.as_deref(), &vars) {
        Ok(f) => f,
        Err(e) => {
            out.push(Finding::trap(
                format!("libkrphase.so would decline: {e}"),
                "use only %pid%, %ppid%, %hostname%, %rank% and %env{NAME}% in KRPHASE_OUTPUT",
            ));
            return out;
        }
    };
    let dir = match file.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from("."),
    };
    // rocprofv3 creates its output directory before the application starts.
    let created_by_rocprofv3 =
        template.is_none() && rocprofv3.is_some_and(|r| r.output_directory.is_some());
    if created_by_rocprofv3 && !out.is_empty() {
        // Already reported: the phase file goes into rocprofv3's unusable directory.
        return out;
    }
    let checked = if created_by_rocprofv3 {
        nearest_existing(&dir)
    } else {
        dir.clone()
    };
    if let Err(why) = usable(&checked) {
        out.push(Finding::trap(
            format!(
                "the phase file would be written as {}, but {}: {why}",
                file.display(),
                checked.display()
            ),
            "set KRPHASE_OUTPUT to a file or directory (ending in /) you can write and read",
        ));
    }
    out
}
