//! The SDK variant and policy every window runs with, fixed once at start-up.

use super::cost_model::CostModel;
use super::drain::SDK_DRAIN_LIMIT;
use crate::device_backing::DEFAULT_DEVICE_MEMORY;
use crate::opts::{
    ContinueUserData, DeclineOpt, DeviceFallback, LayoutOpt, PassCountOne, PassModel, RestoreOrder,
    StuckSettings,
};
use std::sync::OnceLock;
use std::time::Duration;

/// The SDK variant and policy the window runs with.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub layout: LayoutOpt,
    pub restore_order: RestoreOrder,
    /// Which user_data `replay_continue` receives.
    pub continue_user_data: ContinueUserData,
    /// What a pass count of 1 means.
    pub pass_count_one: PassCountOne,
    /// Whether the window prints the (unpublished, guessed) phase line.
    pub phase_line: bool,
    pub decline: Option<DeclineOpt>,
    pub budget: u64,
    pub gbps: f64,
    pub decline_on_vmem: bool,
    pub decline_on_untracked_pool: bool,
    /// `--decline pass_drain_stuck`: the pass whose kernel is held, and in how many windows.
    pub stuck: Option<StuckSettings>,
    /// Total wait of each drain before it counts as stuck (the SDK: 60 s).
    pub drain_timeout: Duration,
    /// `--sdk-build`: the build's cost model; `None` paces copies to `gbps` alone.
    pub model: Option<CostModel>,
    /// The device memory the device-side build's GPU-local backing must fit in, bytes.
    pub device_memory: u64,
    /// What the device-side build does with a region whose backing does not fit.
    pub device_fallback: DeviceFallback,
    /// `--pass-model` and its parameters.
    pub pass_model: PassModelSettings,
}

static CONFIG: OnceLock<ReplayConfig> = OnceLock::new();

/// Fixes the configuration for this process (the first call wins).
pub fn configure(c: ReplayConfig) {
    let _ = CONFIG.set(c);
}

/// The configuration set by [`configure`], or the SDK's defaults.
pub(crate) fn config() -> &'static ReplayConfig {
    CONFIG.get_or_init(|| ReplayConfig {
        layout: LayoutOpt::B,
        restore_order: RestoreOrder::Host,
        continue_user_data: ContinueUserData::Pass,
        pass_count_one: PassCountOne::NoReplay,
        phase_line: false,
        decline: None,
        budget: u64::MAX,
        gbps: 12.0,
        decline_on_vmem: true,
        decline_on_untracked_pool: false,
        stuck: None,
        drain_timeout: SDK_DRAIN_LIMIT,
        model: None,
        device_memory: DEFAULT_DEVICE_MEMORY,
        device_fallback: DeviceFallback::Host,
        pass_model: PassModelSettings::UNIFORM,
    })
}

/// The model and its parameters, fixed for the run.
#[derive(Debug, Clone, Copy)]
pub struct PassModelSettings {
    pub model: PassModel,
    pub cache_bytes: u64,
    pub warm_speedup: f64,
    pub spread: f64,
    pub seed: u64,
    pub growth: f64,
    /// `--pass-model-kernels`: the kernel ids the model applies to, one bit each (bit id − 1);
    /// `None`: every kernel.
    pub kernels: Option<u64>,
}

impl PassModelSettings {
    pub const UNIFORM: PassModelSettings = PassModelSettings {
        model: PassModel::Uniform,
        cache_bytes: DEFAULT_CACHE_BYTES,
        warm_speedup: 0.30,
        spread: 0.25,
        seed: 1,
        growth: 0.5,
        kernels: None,
    };

    /// The model of a window of kernel `kernel_id`: `uniform` for kernels the model leaves out.
    pub fn model_for(&self, kernel_id: u64) -> PassModel {
        let selected = match (self.kernels, kernel_id.checked_sub(1)) {
            (None, _) => true,
            (Some(bits), Some(i)) if i < 64 => bits & (1 << i) != 0,
            _ => false,
        };
        if selected {
            self.model
        } else {
            PassModel::Uniform
        }
    }
}

/// `--cache-bytes` default: the MI300X's 256 MB AMD Infinity Cache (AMD CDNA 3 white paper),
/// the last level a replayed footprint can stay warm in.
pub const DEFAULT_CACHE_BYTES: u64 = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_selection_leaves_the_other_kernels_uniform() {
        let all = PassModelSettings {
            model: PassModel::WarmCache,
            ..PassModelSettings::UNIFORM
        };
        assert_eq!(all.model_for(3), PassModel::WarmCache);
        let some = PassModelSettings {
            kernels: Some(0b100),
            ..all
        };
        assert_eq!(
            some.model_for(3),
            PassModel::WarmCache,
            "bit 2 is kernel id 3"
        );
        assert_eq!(some.model_for(2), PassModel::Uniform);
        assert_eq!(some.model_for(0), PassModel::Uniform, "no kernel id 0");
        assert_eq!(some.model_for(99), PassModel::Uniform);
    }
}
