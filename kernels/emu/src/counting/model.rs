//! What one execution of a dispatch counts, computed from its shape alone, so every pass of a
//! replayed dispatch counts the same and tests can compute the expected values:
//!
//! - work-items `W` = grid x·y·z, work-group size `G` = x·y·z, work-groups `⌈W / G⌉`;
//! - `SQ_WAVES` = work-groups × `⌈G / 64⌉` (64-wide waves);
//! - `SQ_INSTS_VALU` = 16 × SQ_WAVES, `SQ_INSTS_SALU` = 4 × SQ_WAVES,
//!   `SQ_INSTS_SMEM` = 2 × SQ_WAVES, `SQ_INSTS_LDS` = 0 (the workloads use no LDS);
//! - `SQ_BUSY_CYCLES` = 4 × W (cycles proportional to the work);
//! - `GRBM_GUI_ACTIVE` = 1 000 + 4 × W, `GRBM_COUNT` = GRBM_GUI_ACTIVE + 100.

use super::catalogue::COUNTERS;
use krphase_ffi::KernelDispatchInfo;

/// Lanes per wave on the emulated device (CDNA's wave64).
pub const WAVE_SIZE: u64 = 64;

/// The value of counter `index` for one execution of a dispatch of this shape.
pub fn value(index: usize, info: &KernelDispatchInfo) -> f64 {
    let dims = |d: krphase_ffi::Dim3| {
        u64::from(d.x.max(1)) * u64::from(d.y.max(1)) * u64::from(d.z.max(1))
    };
    let items = dims(info.grid_size);
    let group = dims(info.workgroup_size);
    let waves = items.div_ceil(group) * group.div_ceil(WAVE_SIZE);
    let v = match COUNTERS[index].name {
        "SQ_WAVES" => waves,
        "SQ_INSTS_VALU" => 16 * waves,
        "SQ_INSTS_SALU" => 4 * waves,
        "SQ_INSTS_SMEM" => 2 * waves,
        "SQ_BUSY_CYCLES" => 4 * items,
        "GRBM_GUI_ACTIVE" => 1_000 + 4 * items,
        "GRBM_COUNT" => 1_100 + 4 * items,
        _ => 0,
    };
    v as f64
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
        let v = |n: &str, i: &KernelDispatchInfo| value(index_of(n).unwrap(), i);
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
    }
}
