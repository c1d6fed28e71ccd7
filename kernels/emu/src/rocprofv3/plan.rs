//! How the counter groups are collected (as rocprofv3 @01610ac2 decides it), and the APP
//! launches, each with its output directory and environment, that carry the plan out.

use super::options::{Group, Options};
use std::path::{Path, PathBuf};

/// How the counter groups are collected.
#[derive(Debug, Clone, PartialEq)]
pub enum Collection {
    /// No counters: one plain run.
    None,
    /// One group, one run.
    SinglePass(Group),
    /// One run per group.
    ApplicationReplay(Vec<Group>),
    /// Groups rotate across dispatches every `interval` dispatches, one run.
    Rotation { groups: Vec<Group>, interval: u64 },
    /// One run; each dispatch replayed once per group.
    KernelReplay(Vec<Group>),
}

/// One APP launch: output directory and environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub output_path: PathBuf,
    pub env: Vec<(String, String)>,
    /// Pass number under application replay (`pass_<n>`).
    pub pass: Option<usize>,
}

/// The input file's groups and rotation interval (`jobs[0]`, JSON only).
pub fn read_input(path: &Path) -> Result<(Vec<Group>, u64), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read input file {}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("input file {} is not JSON: {e}", path.display()))?;
    let job = v
        .get("jobs")
        .and_then(|j| j.get(0))
        .ok_or_else(|| format!("input file {} has no jobs[0]", path.display()))?;
    let strings = |g: &serde_json::Value| -> Option<Group> {
        g.as_array()?
            .iter()
            .map(|c| c.as_str().map(String::from))
            .collect()
    };
    let groups: Vec<Group> = if let Some(gs) = job.get("pmc_groups") {
        gs.as_array()
            .and_then(|a| a.iter().map(strings).collect::<Option<Vec<_>>>())
            .ok_or_else(|| format!("{}: pmc_groups must be a list of lists", path.display()))?
    } else if let Some(p) = job.get("pmc") {
        vec![strings(p).ok_or_else(|| format!("{}: pmc must be a list", path.display()))?]
    } else {
        Vec::new()
    };
    let interval = match job.get("pmc_group_interval") {
        None => 1,
        Some(n) => n
            .as_u64()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{}: pmc_group_interval must be >= 1", path.display()))?,
    };
    Ok((groups, interval))
}

/// Decides how the groups are collected, as rocprofv3 @01610ac2 does.
pub fn plan(o: &Options) -> Result<(Collection, Option<String>), String> {
    let kernel_mode = o.replay_mode.as_deref() == Some("kernel");
    let mut warning = None;
    if kernel_mode && o.beta_flag != Some(true) {
        return Err(
            "--replay-mode kernel is experimental: add --kernel-replay-beta-enabled".into(),
        );
    }
    if o.beta_flag == Some(true) && !kernel_mode {
        warning = Some(
            "--kernel-replay-beta-enabled without --replay-mode kernel does not enable kernel \
             replay; several --pmc groups use application replay"
                .to_string(),
        );
    }
    let (groups, interval) = match &o.input {
        Some(path) => {
            if !o.groups.is_empty() {
                return Err("give counters either with --pmc or with -i, not both".into());
            }
            let (g, i) = read_input(path)?;
            (g, Some(i))
        }
        None => (o.groups.clone(), None),
    };
    let rocpd = o.output_formats.iter().any(|f| f == "rocpd");
    if rocpd && !kernel_mode {
        return Err(
            "--output-format rocpd: the stand-in writes rocpd only under --replay-mode kernel, \
             where its counter tool runs in the application"
                .into(),
        );
    }
    if kernel_mode {
        if groups.is_empty() {
            return Err("--replay-mode kernel requires counters (--pmc or -i pmc_groups)".into());
        }
        return Ok((Collection::KernelReplay(groups), warning));
    }
    let c = match (groups.len(), interval) {
        (0, _) => Collection::None,
        (1, _) => Collection::SinglePass(groups[0].clone()),
        (_, Some(interval)) => Collection::Rotation { groups, interval },
        (_, None) => Collection::ApplicationReplay(groups),
    };
    Ok((c, warning))
}

fn groups_env(groups: &[Group]) -> String {
    groups
        .iter()
        .map(|g| format!("pmc: {}", g.join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The APP launches of a plan.
pub fn launches(o: &Options, c: &Collection) -> Vec<Launch> {
    let base = o
        .output_directory
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    let mut common = vec![(
        "ROCPROF_OUTPUT_FILE_NAME".to_string(),
        o.output_file.clone().unwrap_or_else(|| "out".into()),
    )];
    // As rocprofv3 does, the name form is always passed on (its tool reads both).
    common.push((
        "ROCPROF_TRUNCATE_KERNELS".into(),
        if o.truncate_kernels { "1" } else { "0" }.into(),
    ));
    common.push((
        "ROCPROF_DEMANGLE_KERNELS".into(),
        if o.mangled_kernels { "0" } else { "1" }.into(),
    ));
    if let Some(r) = &o.kernel_include_regex {
        common.push(("ROCPROF_KERNEL_FILTER_INCLUDE_REGEX".into(), r.clone()));
        common.push(("KRPHASE_EMU_DRIVER_FILTER".into(), r.clone()));
    }
    let one = |env: Vec<(String, String)>| Launch {
        output_path: base.clone(),
        env,
        pass: None,
    };
    let with = |extra: Vec<(&str, String)>| {
        let mut env = common.clone();
        env.extend(extra.into_iter().map(|(k, v)| (k.to_string(), v)));
        env
    };
    match c {
        Collection::None => vec![one(with(vec![]))],
        Collection::SinglePass(g) => vec![one(with(vec![("ROCPROF_COUNTERS", g.join(" "))]))],
        Collection::Rotation { groups, interval } => vec![one(with(vec![
            ("ROCPROF_COUNTER_GROUPS", groups_env(groups)),
            ("ROCPROF_COUNTER_GROUPS_INTERVAL", interval.to_string()),
        ]))],
        Collection::KernelReplay(groups) => vec![one(with(vec![
            ("ROCPROF_KERNEL_REPLAY", "1".into()),
            ("ROCPROF_COUNTER_GROUPS", groups_env(groups)),
            ("KRPHASE_EMU_DRIVER_PASSES", groups.len().to_string()),
        ]))],
        Collection::ApplicationReplay(groups) => groups
            .iter()
            .enumerate()
            .map(|(n, g)| Launch {
                output_path: base.join(format!("pass_{}", n + 1)),
                env: with(vec![("ROCPROF_COUNTERS", g.join(" "))]),
                pass: Some(n + 1),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::options::parse;
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn planned(s: &str) -> Collection {
        plan(&parse(&args(s)).unwrap()).unwrap().0
    }

    #[test]
    fn several_pmc_groups_are_application_replay() {
        let c = planned("--pmc A B --pmc A C -d out -- app 1");
        assert_eq!(
            c,
            Collection::ApplicationReplay(vec![args("A B"), args("A C")])
        );
        let o = parse(&args("--pmc A B --pmc A C -d out -- app 1")).unwrap();
        let l = launches(&o, &c);
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].output_path, PathBuf::from("out/pass_2"));
        assert!(
            l[0].env
                .contains(&("ROCPROF_COUNTERS".into(), "A B".into()))
        );
        assert_eq!(o.app, args("app 1"));
    }

    #[test]
    fn kernel_replay_needs_both_flags_and_drives_one_pass_per_group() {
        let s = "--replay-mode kernel --kernel-replay-beta-enabled --pmc A --pmc B --pmc C -- app";
        let c = planned(s);
        assert!(matches!(c, Collection::KernelReplay(ref g) if g.len() == 3));
        let l = launches(&parse(&args(s)).unwrap(), &c);
        assert_eq!(l.len(), 1);
        assert!(
            l[0].env
                .contains(&("KRPHASE_EMU_DRIVER_PASSES".into(), "3".into()))
        );
        assert!(
            l[0].env
                .contains(&("ROCPROF_KERNEL_REPLAY".into(), "1".into()))
        );
        let missing_ack = parse(&args("--replay-mode kernel --pmc A -- app")).unwrap();
        assert!(plan(&missing_ack).is_err());
    }

    #[test]
    fn rocpd_output_only_under_kernel_replay() {
        let o = parse(&args("--pmc A --pmc B --output-format rocpd -- app")).unwrap();
        assert!(
            plan(&o)
                .unwrap_err()
                .contains("only under --replay-mode kernel")
        );
        let o = parse(&args(
            "--replay-mode kernel --kernel-replay-beta-enabled --pmc A --output-format rocpd -- app",
        ))
        .unwrap();
        assert!(matches!(plan(&o).unwrap().0, Collection::KernelReplay(_)));
    }

    #[test]
    fn beta_flag_alone_is_application_replay_with_a_warning() {
        let o = parse(&args("--pmc A --pmc B --kernel-replay-beta-enabled -- app")).unwrap();
        let (c, warning) = plan(&o).unwrap();
        assert!(matches!(c, Collection::ApplicationReplay(_)));
        assert!(warning.is_some());
    }

    #[test]
    fn filter_and_outputs_are_passed() {
        let o = parse(&args(
            "--pmc A --kernel-include-regex ^x$ --output-format json csv -d d -o name -- app",
        ))
        .unwrap();
        assert_eq!(o.output_formats, args("json csv"));
        let l = launches(&o, &plan(&o).unwrap().0);
        assert!(
            l[0].env
                .contains(&("KRPHASE_EMU_DRIVER_FILTER".into(), "^x$".into()))
        );
        assert!(
            l[0].env
                .contains(&("ROCPROF_OUTPUT_FILE_NAME".into(), "name".into()))
        );
    }
}
