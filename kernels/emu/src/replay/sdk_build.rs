//! `--sdk-build LIST`: which upstream changes of the snapshot and drain the emulated SDK was
//! built with. Each switch is one change and changes only what that change changes; any
//! combination is allowed, because the lines of work they come from cannot be put in order.

/// The switches, in the order the label lists them.
pub const SWITCHES: [&str; 4] = [
    "signal-pool",
    "skip-cu-markers",
    "keep-staging",
    "device-side",
];

/// One emulated SDK build: the pre-staging-pool host copy (`baseline`) plus the switched-on
/// changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdkBuild {
    /// #12607: the queue drain's signal comes from the SDK's signal pool instead of one
    /// `hsa_amd_signal_create` per window.
    pub signal_pool: bool,
    /// #12609: HIP's `__hip_cuid_*` compilation-unit markers are left out of the snapshot.
    pub skip_cu_markers: bool,
    /// #12610: host snapshot staging is kept (pinned) across dispatches instead of fresh host
    /// pages every window.
    pub keep_staging: bool,
    /// #10916: GPU-local snapshot backing, device-to-device blits batched into one, restores
    /// queued ahead of the next pass (inside PASS ENTER→EXIT), signal reuse.
    pub device_side: bool,
}

impl SdkBuild {
    /// Parses a comma-separated list of switches; `baseline` (or `none`) alone is no switch.
    pub fn parse(list: &str) -> Result<SdkBuild, String> {
        let mut b = SdkBuild::default();
        let words: Vec<&str> = list.split(',').map(str::trim).collect();
        if words.iter().any(|w| w.is_empty()) {
            return Err(format!("--sdk-build {list:?}: an empty switch in the list"));
        }
        for w in &words {
            let flag = match *w {
                "baseline" | "none" if words.len() == 1 => continue,
                "baseline" | "none" => {
                    return Err(format!(
                        "--sdk-build {list:?}: {w} means no switch and cannot be combined"
                    ));
                }
                "signal-pool" => &mut b.signal_pool,
                "skip-cu-markers" => &mut b.skip_cu_markers,
                "keep-staging" => &mut b.keep_staging,
                "device-side" => &mut b.device_side,
                other => {
                    return Err(format!(
                        "--sdk-build: unknown switch {other:?} (known: baseline, {})",
                        SWITCHES.join(", ")
                    ));
                }
            };
            if *flag {
                return Err(format!("--sdk-build {list:?}: {w} is given twice"));
            }
            *flag = true;
        }
        Ok(b)
    }

    /// The switches that are on, in [`SWITCHES`] order, joined by `,`; `baseline` for none.
    pub fn label(&self) -> String {
        let on = [
            self.signal_pool,
            self.skip_cu_markers,
            self.keep_staging,
            self.device_side,
        ];
        let names: Vec<&str> = SWITCHES
            .iter()
            .zip(on)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        if names.is_empty() {
            "baseline".into()
        } else {
            names.join(",")
        }
    }

    /// Whether the per-window drain-signal creation is gone: the pool (#12607) or the device
    /// build's signal reuse (#10916) removes it, once, whichever is on.
    pub fn drain_signal_pooled(&self) -> bool {
        self.signal_pool || self.device_side
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_switch_and_combinations() {
        assert_eq!(SdkBuild::parse("baseline").unwrap(), SdkBuild::default());
        assert_eq!(SdkBuild::parse("none").unwrap().label(), "baseline");
        let all = SdkBuild::parse("device-side, keep-staging,signal-pool,skip-cu-markers").unwrap();
        assert_eq!(all.label(), SWITCHES.join(","));
        assert!(SdkBuild::parse("keep-staging").unwrap().keep_staging);
    }

    #[test]
    fn rejects_unknown_repeated_empty_and_baseline_combined() {
        for bad in [
            "fast",
            "keep-staging,keep-staging",
            "",
            "baseline,device-side",
            "a,,b",
        ] {
            assert!(SdkBuild::parse(bad).is_err(), "{bad:?}");
        }
    }
}
