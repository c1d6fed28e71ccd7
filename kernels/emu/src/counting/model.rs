//! What one execution of a dispatch counts, computed from its shape and the pass's effect (the
//! `--pass-model`'s factors for this pass; all 1 under `uniform`, so every pass of a replayed
//! dispatch counts the same and tests can compute the expected values):
//!
//! - work-items `W` = grid x·y·z, work-group size `G` = x·y·z, work-groups `⌈W / G⌉`;
//! - `SQ_WAVES` = work-groups × `⌈G / 64⌉` (64-wide waves), whatever the pass;
//! - `SQ_INSTS_VALU` = 16 × SQ_WAVES, `SQ_INSTS_SALU` = 4 × SQ_WAVES,
//!   `SQ_INSTS_SMEM` = 2 × SQ_WAVES, `SQ_INSTS_LDS` = 0 (the workloads use no LDS), each × the
//!   work factor;
//! - `SQ_BUSY_CYCLES` = 4 × W, `GRBM_GUI_ACTIVE` = 1 000 + 4 × W, `GRBM_COUNT` = GRBM_GUI_ACTIVE
//!   + 100, `GRBM_SPI_BUSY` = 3 × W, the cycles × the cycle factor (rounded);
//! - L2 requests `R` = ⌈W / 4⌉ × the work factor (rounded), `TCC_HIT` = R × the hit rate
//!   (rounded; 0.1 under `uniform`), `TCC_MISS` = R − TCC_HIT.

use super::catalogue::COUNTERS;
use krphase_ffi::KernelDispatchInfo;

/// Lanes per wave on the emulated device (CDNA's wave64).
pub const WAVE_SIZE: u64 = 64;

/// The L2 hit rate of a pass that starts with none of its data cached (the workloads stream, so
/// little is reused within one execution).
pub const COLD_HIT_RATE: f64 = 0.1;

/// How one pass differs from a uniform pass (`replay::pass_model` computes it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PassEffect {
    /// The kernel's modelled duration × this.
    pub time: f64,
    /// Instructions and L2 requests × this (work the kernel does).
    pub work: f64,
    /// Cycle counters × this (at a fixed clock, cycles follow time).
    pub cycles: f64,
    /// Fraction of L2 requests that hit.
    pub hit_rate: f64,
}

impl PassEffect {
    /// A pass as every pass is under `uniform`.
    pub const UNIFORM: PassEffect = PassEffect {
        time: 1.0,
        work: 1.0,
        cycles: 1.0,
        hit_rate: COLD_HIT_RATE,
    };
}

impl Default for PassEffect {
    fn default() -> Self {
        PassEffect::UNIFORM
    }
}

/// The value of counter `index` for one execution of a dispatch of this shape, in a pass
/// with effect `e`.
pub fn value(index: usize, info: &KernelDispatchInfo, e: &PassEffect) -> f64 {
    let dims = |d: krphase_ffi::Dim3| {
        u64::from(d.x.max(1)) * u64::from(d.y.max(1)) * u64::from(d.z.max(1))
    };
    let items = dims(info.grid_size);
    let group = dims(info.workgroup_size);
    let waves = items.div_ceil(group) * group.div_ceil(WAVE_SIZE);
    let times = |n: u64, f: f64| (n as f64 * f).round();
    let gui_active = times(1_000 + 4 * items, e.cycles);
    let requests = times(items.div_ceil(4), e.work);
    let hits = (requests * e.hit_rate.clamp(0.0, 1.0)).round();
    match COUNTERS[index].name {
        "SQ_WAVES" => waves as f64,
        "SQ_INSTS_VALU" => times(16 * waves, e.work),
        "SQ_INSTS_SALU" => times(4 * waves, e.work),
        "SQ_INSTS_SMEM" => times(2 * waves, e.work),
        "SQ_BUSY_CYCLES" => times(4 * items, e.cycles),
        "GRBM_GUI_ACTIVE" => gui_active,
        "GRBM_COUNT" => gui_active + 100.0,
        "GRBM_SPI_BUSY" => times(3 * items, e.cycles),
        "TCC_HIT" => hits,
        "TCC_MISS" => requests - hits,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counting::catalogue::index_of;
    use krphase_ffi::Dim3;

    fn shaped(grid: u32, group: u32) -> KernelDispatchInfo {
        KernelDispatchInfo {
            grid_size: Dim3 {
                x: grid,
                y: 1,
                z: 1,
            },
            workgroup_size: Dim3 {
                x: group,
                y: 1,
                z: 1,
            },
            ..Default::default()
        }
    }

    #[test]
    fn the_samples_shapes() {
        let v =
            |n: &str, i: &KernelDispatchInfo| value(index_of(n).unwrap(), i, &PassEffect::UNIFORM);
        let bump = shaped(67, 67);
        assert_eq!(v("SQ_WAVES", &bump), 2.0, "67 lanes need two 64-wide waves");
        assert_eq!(v("GRBM_COUNT", &bump), 1_368.0);
        assert_eq!(v("GRBM_GUI_ACTIVE", &bump), 1_268.0);
        let nudge = shaped(64, 64);
        assert_eq!(v("SQ_WAVES", &nudge), 1.0);
        let big = shaped(1 << 20, 256);
        assert_eq!(v("SQ_WAVES", &big), 16_384.0);
        assert_eq!(v("SQ_INSTS_VALU", &big), 262_144.0);
        assert_eq!(v("SQ_BUSY_CYCLES", &big), 4_194_304.0);
        assert_eq!(v("TCC_HIT", &big) + v("TCC_MISS", &big), 262_144.0);
        assert_eq!(v("TCC_HIT", &big), 26_214.0);
    }

    #[test]
    fn a_warm_pass_hits_more_and_takes_fewer_cycles_for_the_same_work() {
        let big = shaped(1 << 20, 256);
        let warm = PassEffect {
            time: 0.7,
            work: 1.0,
            cycles: 0.7,
            hit_rate: 1.0,
        };
        let v = |n: &str, e: &PassEffect| value(index_of(n).unwrap(), &big, e);
        let cold = PassEffect::UNIFORM;
        for same in ["SQ_WAVES", "SQ_INSTS_VALU"] {
            assert_eq!(v(same, &warm), v(same, &cold), "{same}");
        }
        assert_eq!(v("TCC_MISS", &warm), 0.0);
        assert_eq!(v("TCC_HIT", &warm), 262_144.0);
        assert_eq!(v("SQ_BUSY_CYCLES", &warm), (4_194_304.0f64 * 0.7).round());
        let more = PassEffect { work: 2.0, ..cold };
        assert_eq!(v("SQ_INSTS_VALU", &more), 2.0 * v("SQ_INSTS_VALU", &cold));
        assert_eq!(v("SQ_WAVES", &more), v("SQ_WAVES", &cold), "same grid");
    }
}
