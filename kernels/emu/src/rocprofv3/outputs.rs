//! What one APP run leaves behind: its dispatch count (from its result line) and the small
//! per-run file listing the group each dispatch was counted with.

use super::options::{Group, Options};
use super::plan::{Collection, Launch};

/// The dispatch count from the APP's last `result <w> ok ... dispatches=<n>` line.
pub fn dispatches_from_stdout(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("result "))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("dispatches="))?
        .parse()
        .ok()
}

/// Groups (indices) each dispatch was counted with.
pub fn dispatch_groups(c: &Collection, pass: Option<usize>, dispatches: u64) -> Vec<Vec<usize>> {
    (0..dispatches)
        .map(|d| match c {
            Collection::None => vec![],
            Collection::SinglePass(_) => vec![0],
            Collection::ApplicationReplay(_) => vec![pass.unwrap_or(1) - 1],
            Collection::Rotation { groups, interval } => {
                vec![((d / interval) % groups.len() as u64) as usize]
            }
            Collection::KernelReplay(groups) => (0..groups.len()).collect(),
        })
        .collect()
}

fn collection_name(c: &Collection) -> &'static str {
    match c {
        Collection::None => "none",
        Collection::SinglePass(_) => "single-pass",
        Collection::ApplicationReplay(_) => "application-replay",
        Collection::Rotation { .. } => "multiplexed",
        Collection::KernelReplay(_) => "kernel-replay",
    }
}

fn all_groups(c: &Collection) -> Vec<Group> {
    match c {
        Collection::None => vec![],
        Collection::SinglePass(g) => vec![g.clone()],
        Collection::ApplicationReplay(g)
        | Collection::KernelReplay(g)
        | Collection::Rotation { groups: g, .. } => g.clone(),
    }
}

pub fn write_outputs(
    o: &Options,
    c: &Collection,
    l: &Launch,
    dispatches: u64,
) -> Result<(), String> {
    let name = o.output_file.clone().unwrap_or_else(|| "out".into());
    let per_dispatch = dispatch_groups(c, l.pass, dispatches);
    let formats = if o.output_formats.is_empty() {
        vec!["json".to_string()]
    } else {
        o.output_formats.clone()
    };
    // Under kernel replay, JSON is rocprofv3's own layout, written from the counter tool's
    // buffer (`json_output.rs`).
    let kernel_replay = matches!(c, Collection::KernelReplay(_));
    for f in formats
        .into_iter()
        .filter(|f| f != "rocpd" && !(kernel_replay && f == "json"))
    {
        let (path, text) = if f == "json" {
            let doc = serde_json::json!({
                "collection": collection_name(c),
                "groups": all_groups(c),
                "pass": l.pass,
                "dispatches": dispatches,
                "dispatch_groups": per_dispatch,
            });
            (
                l.output_path.join(format!("{name}_results.json")),
                doc.to_string(),
            )
        } else {
            let mut s = String::from("dispatch,group\n");
            for (d, gs) in per_dispatch.iter().enumerate() {
                for g in gs {
                    s += &format!("{d},{g}\n");
                }
            }
            (
                l.output_path.join(format!("{name}_counter_collection.csv")),
                s,
            )
        };
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::options::parse;
    use super::super::plan::plan;
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn input_file_groups_rotate() {
        let dir = std::env::temp_dir().join(format!("rocprofv3-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("in.json");
        std::fs::write(
            &f,
            r#"{"jobs":[{"pmc_groups":[["A","B"],["A","C"],["A","D"]],"pmc_group_interval":2}]}"#,
        )
        .unwrap();
        let o = parse(&args(&format!("-i {} -- app", f.display()))).unwrap();
        let c = plan(&o).unwrap().0;
        assert!(matches!(c, Collection::Rotation { interval: 2, ref groups } if groups.len() == 3));
        let per = dispatch_groups(&c, None, 7);
        assert_eq!(
            per,
            vec![
                vec![0],
                vec![0],
                vec![1],
                vec![1],
                vec![2],
                vec![2],
                vec![0]
            ]
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn dispatch_count_comes_from_the_result_line() {
        let out = "x\nresult stream ok checksum=00ff counter=3 dispatches=50\n";
        assert_eq!(dispatches_from_stdout(out), Some(50));
        assert_eq!(dispatches_from_stdout("nothing"), None);
    }
}
