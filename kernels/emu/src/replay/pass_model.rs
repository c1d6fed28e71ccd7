//! `--pass-model`: what makes one replay pass of a dispatch differ from another. Under `uniform`
//! (the default) every pass runs and counts the same. The other models change a pass's modelled
//! kernel time (the `--sdk-build` floor it is paced to) and its counters (`counting::model`),
//! and each executed pass writes a `pass_model` truth line with its factors and counter values.
//!
//! `--pass-model-kernels` limits the model to some kernels; the others' passes stay uniform.
//!
//! - `warm-cache`: pass 0 starts cold; each later pass finds part of the kernel's data still in
//!   the cache. Footprint `F` = the kernel's bytes (traffic per item × grid; else the snapshot's
//!   bytes), cache `C` (`--cache-bytes`); residency `r` = 1 when `F ≤ C`, else `(C/F)²` (a
//!   cyclic sweep larger than an LRU cache mostly evicts itself). The restore between passes
//!   keeps a share `k` of it: device-side copies (blits through the L2, restore order `device`)
//!   leave the restored lines cached, `k` = 1; host copies (DMA from host staging, which writes
//!   memory behind the L2 and invalidates the lines it overwrites) keep `k` = 0.5 (assumed).
//!   Warmth `w` = `r·k` (0 in pass 0); time and cycles × `1 − S·w` (`--warm-speedup` S, 0.30:
//!   pass 1 at 0.7× pass 0, as the H200 measurement for footprints below its L2); the L2 hit
//!   rate is `0.1 + 0.9·w`.
//! - `nondeterministic`: atomic order differs per pass: time, cycles × `1 + a·u` and the hit
//!   rate × `1 − a·u`, `u` uniform in [−1, 1] from (`--pass-seed`, dispatch id, pass), `a` =
//!   `--pass-spread`.
//! - `incomplete-restore`: the kernel also appends to a worklist in an untracked pool
//!   allocation, which the snapshot does not hold (the SDK replays such windows by default).
//!   The list is reset to [`WORKLIST_START`] items when the window opens (the application's
//!   reset before each launch); each execution processes the list and grows it by
//!   `--worklist-growth` of its length, so pass `i` does `(1 + g)^i` times pass 0's work.

use super::config::PassModelSettings;
use super::copy_plan::Taken;
use super::open_window::OpenWindow;
use crate::counting::model::{COLD_HIT_RATE, PassEffect};
use crate::counting::{catalogue, model};
use crate::device::KernelBody;
use crate::memory::{self, Region};
use crate::opts::{PassModel, RestoreOrder};
use crate::truth;
use krphase_kernels::device_memory::{get_u64, set_u64};
use krphase_kernels::{kernel_name, traffic_per_item};
use parking_lot::Mutex;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// Items in the worklist when a window opens (incomplete-restore).
pub const WORKLIST_START: u64 = 1024;
/// The worklist's untracked pool allocation, bytes.
const WORKLIST_BYTES: u64 = 64;

/// Each agent's worklist (incomplete-restore), allocated at its first window.
static WORKLISTS: LazyLock<Mutex<HashMap<u64, Arc<Region>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// At window open, before admission: the incomplete-restore model's worklist exists (so the
/// admission counts it as untracked pool memory) and is reset to its starting length.
pub(super) fn open(win: &OpenWindow) {
    if win.cfg.pass_model.model_for(win.launch.kernel_id) != PassModel::IncompleteRestore {
        return;
    }
    let agent = win.queue.agent;
    let list = WORKLISTS
        .lock()
        .entry(agent)
        .or_insert_with(|| memory::allocate_untracked(WORKLIST_BYTES, agent))
        .clone();
    set_u64(&list.words, 0, WORKLIST_START);
}

/// One window's model: what it needs to compute each pass's effect.
pub(super) struct WindowModel {
    s: PassModelSettings,
    /// The run has a model (its left-out kernels' passes get `uniform` truth lines too).
    truth: bool,
    footprint: u64,
    device_restore: bool,
    dispatch_id: u64,
    worklist: Option<Arc<Region>>,
}

/// One pass's effect, what runs after its kernel, and the extra truth fields.
pub(super) struct PassPlan {
    pub(super) effect: PassEffect,
    pub(super) after: Option<KernelBody>,
    warmth: f64,
    worklist_items: Option<u64>,
}

impl WindowModel {
    pub(super) fn new(win: &OpenWindow, snap: &Taken) -> WindowModel {
        let traffic = kernel_name(win.launch.kernel_id).and_then(traffic_per_item);
        let s = PassModelSettings {
            model: win.cfg.pass_model.model_for(win.launch.kernel_id),
            ..win.cfg.pass_model
        };
        WindowModel {
            s,
            truth: win.cfg.pass_model.model != PassModel::Uniform,
            footprint: traffic.map_or(snap.snap.bytes, |t| t * u64::from(win.launch.grid)),
            device_restore: win.cfg.restore_order == RestoreOrder::Device,
            dispatch_id: win.info.dispatch_id,
            worklist: WORKLISTS.lock().get(&win.queue.agent).cloned(),
        }
    }

    /// The share of the footprint still cached when a pass after the first starts.
    fn warmth(&self) -> f64 {
        let (f, c) = (self.footprint as f64, self.s.cache_bytes as f64);
        let residency = if f <= c { 1.0 } else { (c / f).powi(2) };
        let kept = if self.device_restore { 1.0 } else { 0.5 };
        residency * kept
    }

    /// Pass `i`'s effect (computed when the pass is submitted: the previous one has drained).
    pub(super) fn pass(&self, i: u64) -> PassPlan {
        let mut plan = PassPlan {
            effect: PassEffect::UNIFORM,
            after: None,
            warmth: 0.0,
            worklist_items: None,
        };
        match self.s.model {
            PassModel::Uniform => {}
            PassModel::WarmCache => {
                let w = if i == 0 { 0.0 } else { self.warmth() };
                let t = 1.0 - self.s.warm_speedup * w;
                plan.warmth = w;
                plan.effect = PassEffect {
                    time: t,
                    work: 1.0,
                    cycles: t,
                    hit_rate: COLD_HIT_RATE + (1.0 - COLD_HIT_RATE) * w,
                };
            }
            PassModel::Nondeterministic => {
                let u = unit(self.s.seed, self.dispatch_id, i);
                let t = 1.0 + self.s.spread * u;
                plan.effect = PassEffect {
                    time: t,
                    work: 1.0,
                    cycles: t,
                    hit_rate: COLD_HIT_RATE * (1.0 - self.s.spread * u),
                };
            }
            PassModel::IncompleteRestore => {
                let Some(list) = self.worklist.clone() else {
                    return plan;
                };
                let items = get_u64(&list.words, 0);
                let f = items as f64 / WORKLIST_START as f64;
                let growth = self.s.growth;
                plan.worklist_items = Some(items);
                plan.effect = PassEffect {
                    time: f,
                    work: f,
                    cycles: f,
                    hit_rate: COLD_HIT_RATE,
                };
                plan.after = Some(Arc::new(move || {
                    let n = get_u64(&list.words, 0);
                    set_u64(&list.words, 0, n + (n as f64 * growth).round() as u64);
                }));
            }
        }
        plan
    }

    /// The `pass_model` truth line of executed pass `i` (none in a run without a model).
    pub(super) fn write_truth(&self, win: &OpenWindow, i: u64, plan: &PassPlan) {
        if !self.truth || !truth::enabled() {
            return;
        }
        let e = plan.effect;
        let counters: serde_json::Map<String, serde_json::Value> = (0..catalogue::COUNTERS.len())
            .map(|c| {
                let v = model::value(c, &win.info, &e);
                (catalogue::COUNTERS[c].name.to_string(), json!(v))
            })
            .collect();
        truth::write(&json!({
            "type": "pass_model", "pid": std::process::id(),
            "dispatch_id": self.dispatch_id, "kernel_id": win.launch.kernel_id,
            "pass": i, "model": self.s.model.name(),
            "time_factor": e.time, "work_factor": e.work, "cycle_factor": e.cycles,
            "hit_rate": e.hit_rate, "warmth": plan.warmth,
            "footprint_bytes": self.footprint, "cache_bytes": self.s.cache_bytes,
            "restore": if self.device_restore { "device" } else { "host" },
            "worklist_items": plan.worklist_items,
            "parameters": {
                "warm_speedup": self.s.warm_speedup, "spread": self.s.spread,
                "seed": self.s.seed, "worklist_growth": self.s.growth,
            },
            "counters": counters,
        }));
    }
}

/// A value uniform in [−1, 1] from the seed, the dispatch and the pass (splitmix64).
fn unit(seed: u64, dispatch: u64, pass: u64) -> f64 {
    let mut z = seed
        ^ dispatch.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ pass.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(footprint: u64, device_restore: bool, s: PassModelSettings) -> WindowModel {
        WindowModel {
            s,
            truth: true,
            footprint,
            device_restore,
            dispatch_id: 7,
            worklist: None,
        }
    }

    #[test]
    fn warm_cache_is_shaped_like_the_h200_measurement() {
        let s = PassModelSettings {
            model: PassModel::WarmCache,
            cache_bytes: 60 << 20,
            ..PassModelSettings::UNIFORM
        };
        let t = |f: u64, dev: bool, i: u64| model(f, dev, s).pass(i).effect.time;
        assert_eq!(t(24 << 20, true, 0), 1.0, "pass 0 is the cold reference");
        assert!(
            (t(24 << 20, true, 1) - 0.70).abs() < 1e-12,
            "below the cache"
        );
        assert!(
            (t(24 << 20, false, 1) - 0.85).abs() < 1e-12,
            "host restores keep half"
        );
        let far = t(768 << 20, true, 1);
        assert!(far > 0.99 && far < 1.0, "far above the cache: {far}");
        let near = t(96 << 20, true, 1);
        assert!(near > 0.7 && near < far, "between: {near}");
        let hit = |i| model(24 << 20, true, s).pass(i).effect.hit_rate;
        assert!((hit(0) - COLD_HIT_RATE).abs() < 1e-12 && (hit(1) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn nondeterministic_passes_are_seeded_and_bounded() {
        let s = PassModelSettings {
            model: PassModel::Nondeterministic,
            ..PassModelSettings::UNIFORM
        };
        let times: Vec<f64> = (0..64)
            .map(|i| model(1, false, s).pass(i).effect.time)
            .collect();
        assert!(times.iter().all(|t| (0.75..=1.25).contains(t)));
        let spread =
            times.iter().cloned().fold(0.0, f64::max) - times.iter().cloned().fold(2.0, f64::min);
        assert!(spread > 0.3, "64 passes span most of ±25 %: {spread}");
        let again: Vec<f64> = (0..64)
            .map(|i| model(1, false, s).pass(i).effect.time)
            .collect();
        assert_eq!(times, again, "the same seed gives the same passes");
        let other = PassModelSettings { seed: 2, ..s };
        assert_ne!(model(1, false, other).pass(0).effect.time, times[0]);
    }

    #[test]
    fn uniform_passes_are_all_alike() {
        let m = model(1 << 30, false, PassModelSettings::UNIFORM);
        for i in 0..4 {
            assert_eq!(m.pass(i).effect, PassEffect::UNIFORM);
            assert!(m.pass(i).after.is_none());
        }
    }
}
