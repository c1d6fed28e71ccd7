//! The cost model of an emulated SDK build (`--sdk-build`): how long each kind of snapshot and
//! restore copy and each device latency takes, at GPU scale and then slowed by the one factor of
//! the emulated device.
//!
//! The CPU copies memory at its own memcpy speed, and that speed stands for the GPU's
//! device-local copy rate (about 2 TB/s). So the whole emulated device runs slower than a GPU by
//! `slowdown = DEVICE_LOCAL_GBPS / device_gbps`, and every other cost is the GPU-scale cost
//! times that factor: slower copy kinds are paced down from the memcpy speed in the ratios
//! measured between the kinds on a real PCIe Gen5 host, and latencies (per-window signal
//! creation, per-copy set-up) are stretched by the same factor. Kernels that stream memory are
//! paced too, as device-local copies of their traffic: left to the CPU, their time would follow
//! the cache state each build's copies leave, and a build that only changes copies would seem to
//! change the passes. The drain's wait for work in flight follows the kernels.

use super::sdk_build::SdkBuild;
use std::time::Duration;

/// The GPU's device-to-device copy rate the CPU's memcpy stands for: the 2 GiB device→device
/// rate measured on the PCIe Gen5 host (counting bytes once), 2 074 GB/s.
pub const DEVICE_LOCAL_GBPS: f64 = 2074.0;
/// Per-window `hsa_amd_signal_create` of the drain signal, which signal reuse saves (#10916
/// quotes ~200 µs; a CUDA event's 0.15 µs is a different object and not comparable).
pub const DRAIN_SIGNAL_US: f64 = 200.0;
/// One small copy: 4 096 copies of 64 B took 6.5 µs per region, so region count, not bytes,
/// decides the cost of small regions.
pub const SMALL_COPY_US: f64 = 6.5;
/// The copy sizes the rates were measured at: 1, 8, 64, 512 MiB and 2 GiB.
pub const MEASURED_BYTES: [f64; 5] = [
    (1u64 << 20) as f64,
    (8u64 << 20) as f64,
    (64u64 << 20) as f64,
    (512u64 << 20) as f64,
    (2u64 << 30) as f64,
];

/// The kinds of copy a snapshot or restore makes, each with the rates measured on the PCIe
/// Gen5 host (medians, GB/s, at [`MEASURED_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// Device → fresh pageable host pages (no staging kept): ~1.6 GB/s.
    FreshHostD2H,
    /// Device → pinned host staging kept across dispatches: ~55 GB/s.
    PinnedD2H,
    /// Reused pageable host buffer (this window's snapshot) → device: ~8.5 GB/s.
    PageableH2D,
    /// Pinned host staging → device: ~55 GB/s.
    PinnedH2D,
    /// Device → device (GPU-local backing, blits batched into one): ~2 TB/s at large sizes.
    DeviceD2D,
}

impl CopyKind {
    /// Every kind, for tables and tests.
    pub const ALL: [CopyKind; 5] = [
        CopyKind::FreshHostD2H,
        CopyKind::PinnedD2H,
        CopyKind::PageableH2D,
        CopyKind::PinnedH2D,
        CopyKind::DeviceD2D,
    ];

    /// The name the truth file gives the kind.
    pub fn name(self) -> &'static str {
        match self {
            CopyKind::FreshHostD2H => "d2h_fresh_pageable",
            CopyKind::PinnedD2H => "d2h_pinned",
            CopyKind::PageableH2D => "h2d_pageable",
            CopyKind::PinnedH2D => "h2d_pinned",
            CopyKind::DeviceD2D => "d2d",
        }
    }

    /// The measured rates at [`MEASURED_BYTES`], GB/s.
    pub fn measured_gbps(self) -> [f64; 5] {
        match self {
            CopyKind::FreshHostD2H => [1.5, 1.6, 1.5, 1.6, 1.6],
            CopyKind::PinnedD2H => [33.5, 50.8, 54.2, 55.2, 55.3],
            CopyKind::PageableH2D => [7.7, 7.3, 7.2, 8.6, 8.5],
            CopyKind::PinnedH2D => [23.1, 47.6, 54.4, 55.3, 55.4],
            CopyKind::DeviceD2D => [54.0, 356.0, 974.0, 1832.0, DEVICE_LOCAL_GBPS],
        }
    }

    /// One copy of `bytes` at GPU scale, µs: at the measured rate, interpolated log-log between
    /// the measured sizes (the 2 GiB rate beyond); below 1 MiB, linear from a small copy's
    /// 6.5 µs to the 1 MiB copy's time, since small copies are bound by set-up, not bytes.
    pub fn gpu_us(self, bytes: u64) -> f64 {
        let (b, rates) = (bytes as f64, self.measured_gbps());
        let at = |i: usize| MEASURED_BYTES[i] / (rates[i] * 1e3);
        if b <= MEASURED_BYTES[0] {
            return SMALL_COPY_US + (at(0) - SMALL_COPY_US) * b / MEASURED_BYTES[0];
        }
        let Some(i) = (0..4).find(|&i| b <= MEASURED_BYTES[i + 1]) else {
            return b / (rates[4] * 1e3);
        };
        let f = (b / MEASURED_BYTES[i]).ln() / (MEASURED_BYTES[i + 1] / MEASURED_BYTES[i]).ln();
        let rate = (rates[i].ln() + f * (rates[i + 1].ln() - rates[i].ln())).exp();
        b / (rate * 1e3)
    }
}

/// A build's costs on this machine.
#[derive(Debug, Clone, Copy)]
pub struct CostModel {
    pub build: SdkBuild,
    /// This machine's memcpy rate (the emulator's own copy loop), GB/s: the device-local rate.
    pub device_gbps: f64,
    /// How much slower than a GPU the emulated device runs: `DEVICE_LOCAL_GBPS / device_gbps`.
    pub slowdown: f64,
}

impl CostModel {
    pub fn new(build: SdkBuild, device_gbps: f64) -> CostModel {
        CostModel {
            build,
            device_gbps,
            slowdown: DEVICE_LOCAL_GBPS / device_gbps,
        }
    }

    /// A GPU-scale duration in µs, stretched to the emulated device.
    fn scaled(&self, gpu_us: f64) -> Duration {
        Duration::from_secs_f64(gpu_us * 1e-6 * self.slowdown)
    }

    /// The drain signal's creation in this window: none when it comes from a pool.
    pub fn drain_signal(&self) -> Duration {
        if self.build.drain_signal_pooled() {
            Duration::ZERO
        } else {
            self.scaled(DRAIN_SIGNAL_US)
        }
    }

    /// Copies of `sizes` bytes each, one after another, as `kind`.
    pub fn copies(&self, kind: CopyKind, sizes: impl IntoIterator<Item = u64>) -> Duration {
        self.scaled(sizes.into_iter().map(|b| kind.gpu_us(b)).sum())
    }

    /// One kernel reading and writing `traffic` bytes of device memory. A streaming kernel moves
    /// its bytes as a device-local copy of half of them does (the copy rate counts each byte
    /// once, and a copy reads and writes it), so it takes the `d2d` time of `traffic / 2`,
    /// set-up bound below 1 MiB as small copies are. The CPU loop standing for the kernel runs
    /// well inside this at any slow-down a memcpy rate gives, so the paced time, not the cache
    /// state the copies before it leave, decides the kernel's time.
    pub fn kernel(&self, traffic: u64) -> Duration {
        self.copies(CopyKind::DeviceD2D, [traffic / 2])
    }

    /// How host staging is copied out in this build: pinned kept staging or fresh pages.
    pub fn host_snapshot_kind(&self) -> CopyKind {
        if self.build.keep_staging {
            CopyKind::PinnedD2H
        } else {
            CopyKind::FreshHostD2H
        }
    }

    /// How host staging is copied back: the kept staging is pinned, so restores from it run at
    /// the pinned rate too; without it the window's own pageable buffer is reused.
    pub fn host_restore_kind(&self) -> CopyKind {
        if self.build.keep_staging {
            CopyKind::PinnedH2D
        } else {
            CopyKind::PageableH2D
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modelled_copies_take_the_measured_rates_and_small_ones_their_set_up() {
        let m = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS); // slowdown 1
        for kind in CopyKind::ALL {
            for (bytes, want) in MEASURED_BYTES.iter().zip(kind.measured_gbps()) {
                let got = bytes / m.copies(kind, [*bytes as u64]).as_secs_f64() / 1e9;
                assert!(
                    (got / want - 1.0).abs() < 1e-4,
                    "{kind:?} {bytes}: {got} vs {want}"
                );
            }
            let small = m.copies(kind, [64]).as_secs_f64() * 1e6;
            assert!(
                (6.5..6.6).contains(&small),
                "{kind:?}: a 64-byte copy takes {small} µs"
            );
            // Between the measured sizes the rate lies between its neighbours'.
            let r = kind.measured_gbps();
            let mid = (3u64 << 20) as f64 / m.copies(kind, [3 << 20]).as_secs_f64() / 1e9;
            assert!(
                mid >= r[0].min(r[1]) - 1e-9 && mid <= r[0].max(r[1]) + 1e-9,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_kernel_takes_the_device_local_copy_of_half_its_traffic() {
        let m = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS / 100.0);
        let big = (2u64 << 30) * 2;
        let want = (2u64 << 30) as f64 / (DEVICE_LOCAL_GBPS / 100.0 * 1e9);
        assert!((m.kernel(big).as_secs_f64() - want).abs() < 1e-9);
        // A 16 Ki-element STREAM copy (256 KiB read and written) is set-up bound: 8.1 µs at
        // GPU scale, between a small copy's 6.5 µs and the 1 MiB copy's 19.4 µs.
        let us = m.kernel(16_384 * 16).as_secs_f64() * 1e6 / 100.0;
        assert!((8.0..8.2).contains(&us), "{us} µs");
    }

    #[test]
    fn the_slowdown_stretches_every_cost_by_one_factor() {
        let fast = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS);
        let slow = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS / 100.0);
        assert!((slow.slowdown - 100.0).abs() < 1e-9);
        let r = slow.drain_signal().as_secs_f64() / fast.drain_signal().as_secs_f64();
        assert!((r - 100.0).abs() < 1e-6);
        let d2d = slow.copies(CopyKind::DeviceD2D, [4 << 30]).as_secs_f64();
        assert!((d2d - (4u64 << 30) as f64 / (DEVICE_LOCAL_GBPS / 100.0 * 1e9)).abs() < 1e-9);
        let pooled = SdkBuild::parse("signal-pool").unwrap();
        assert_eq!(CostModel::new(pooled, 1.0).drain_signal(), Duration::ZERO);
    }
}
