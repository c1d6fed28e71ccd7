//! What the driver is asked to do, from the environment its launcher sets (as rocprofv3's tool
//! reads `ROCPROF_*`): passes, the kernel include regex, the counter groups, the payload layout
//! of the SDK's header it was "built against", and where to write its counter records.

use krphase_ffi::PayloadLayout;
use krphase_names::{KernelFilter, NameForm};

pub struct Settings {
    /// Passes per replayed dispatch (rocprofv3: the number of `--pmc` groups).
    pub passes: u64,
    /// The kernel include regex, searched on the name in `form`, as rocprofv3's tool does.
    pub filter: Option<KernelFilter>,
    /// The form of kernel names (`ROCPROF_TRUNCATE_KERNELS`, `ROCPROF_DEMANGLE_KERNELS`): what
    /// the filter sees and rocpd's `display_name` shows.
    pub form: NameForm,
    /// One group per pass (pass i counts group i mod groups); empty: replay without counters.
    pub groups: Vec<Vec<String>>,
    pub layout: PayloadLayout,
    /// JSON Lines file of the counter records, written at finalize.
    pub records: Option<String>,
    /// The rocpd writer's buffer file, written at finalize (`rocpd_buffer.rs`).
    pub rocpd: Option<String>,
}

fn var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

/// `ROCPROF_COUNTER_GROUPS`: one `pmc: A B` line per group.
pub fn parse_groups(v: &str) -> Vec<Vec<String>> {
    v.lines()
        .map(|l| l.trim().trim_start_matches("pmc:"))
        .map(|l| {
            l.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|g| !g.is_empty())
        .collect()
}

impl Settings {
    /// The settings, or the one line saying what is wrong (rocprofv3's tool treats a bad
    /// configuration as fatal).
    pub fn from_env() -> Result<Settings, String> {
        let passes = match var("KRPHASE_EMU_DRIVER_PASSES") {
            None => return Err("KRPHASE_EMU_DRIVER_PASSES is not set".into()),
            Some(v) => v.trim().parse::<u64>().map_err(|_| {
                format!("KRPHASE_EMU_DRIVER_PASSES={v:?} is not a non-negative integer")
            })?,
        };
        let switch = |k: &str| {
            var(k).map(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            })
        };
        let form = NameForm::from_switches(
            switch("ROCPROF_TRUNCATE_KERNELS").unwrap_or(false),
            !switch("ROCPROF_DEMANGLE_KERNELS").unwrap_or(true),
        );
        let filter = match var("KRPHASE_EMU_DRIVER_FILTER") {
            None => None,
            Some(f) => Some(
                KernelFilter::new(Some(&f), None, form)
                    .map_err(|e| format!("driver filter: {e}"))?,
            ),
        };
        let layout = match var("KRPHASE_EMU_PAYLOAD_LAYOUT") {
            None => PayloadLayout::B,
            Some(v) => PayloadLayout::parse(&v)
                .ok_or_else(|| format!("KRPHASE_EMU_PAYLOAD_LAYOUT={v:?} is not a or b"))?,
        };
        Ok(Settings {
            passes,
            filter,
            form,
            groups: var("ROCPROF_COUNTER_GROUPS")
                .map(|v| parse_groups(&v))
                .unwrap_or_default(),
            layout,
            records: var("KRPHASE_EMU_DRIVER_RECORDS"),
            rocpd: var("KRPHASE_EMU_DRIVER_ROCPD"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_pmc_lines() {
        assert_eq!(
            parse_groups("pmc: SQ_WAVES GRBM_COUNT\npmc: SQ_INSTS_VALU\n\n"),
            vec![vec!["SQ_WAVES", "GRBM_COUNT"], vec!["SQ_INSTS_VALU"]]
        );
    }
}
