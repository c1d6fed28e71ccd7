//! The cost model of an emulated SDK build (`--sdk-build`): how long each kind of snapshot and
//! restore copy and each device latency takes, at GPU scale and then slowed by the one factor of
//! the emulated device.
//!
//! The CPU copies memory at its own memcpy speed, and that speed stands for the GPU's
//! device-local copy rate (about 2 TB/s). So the whole emulated device runs slower than a GPU by
//! `slowdown = DEVICE_LOCAL_GBPS / device_gbps`, and every other cost is the GPU-scale cost
//! times that factor: slower copy kinds are paced down from the memcpy speed in the ratios
//! measured between the kinds on a real PCIe Gen5 host, and latencies (per-window signal
//! creation, per-copy set-up) are stretched by the same factor. Kernels and the drain's wait for
//! work in flight need no pacing: they are memory-bound loops on the same CPU, so they already
//! run at that scale.

use super::sdk_build::SdkBuild;
use std::time::Duration;

/// The GPU's device-to-device copy rate the CPU's memcpy stands for: the 2 GiB device→device
/// rate measured on the PCIe Gen5 host (counting bytes once), 2 074 GB/s.
pub const DEVICE_LOCAL_GBPS: f64 = 2074.0;
/// Per-window `hsa_amd_signal_create` of the drain signal, which signal reuse saves (#10916
/// quotes ~200 µs; a CUDA event's 0.15 µs is a different object and not comparable).
pub const DRAIN_SIGNAL_US: f64 = 200.0;
/// Set-up of one synchronous host copy: 4 096 copies of 64 B took 6.5 µs per region, so region
/// count, not bytes, decides the cost of small regions.
pub const HOST_COPY_SETUP_US: f64 = 6.5;
/// Set-up of one device-to-device blit (or one batch of them): fitted to the measured
/// device→device rates (1 MiB at 54 GB/s, 8 MiB at 356 GB/s are ~20 µs plus bytes at 2 TB/s).
pub const BLIT_SETUP_US: f64 = 20.0;

/// The kinds of copy a snapshot or restore makes, with their large-copy rates measured on the
/// PCIe Gen5 host (2 GiB, medians).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyKind {
    /// Device → fresh pageable host pages (no staging kept): 1.6 GB/s.
    FreshHostD2H,
    /// Device → pinned host staging kept across dispatches: 55.3 GB/s.
    PinnedD2H,
    /// Reused pageable host buffer (this window's snapshot) → device: 8.5 GB/s.
    PageableH2D,
    /// Pinned host staging → device: 55.4 GB/s.
    PinnedH2D,
    /// Device → device (GPU-local backing, blits batched into one): 2 074 GB/s.
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

    /// The large-copy rate at GPU scale, GB/s.
    pub fn gpu_gbps(self) -> f64 {
        match self {
            CopyKind::FreshHostD2H => 1.6,
            CopyKind::PinnedD2H => 55.3,
            CopyKind::PageableH2D => 8.5,
            CopyKind::PinnedH2D => 55.4,
            CopyKind::DeviceD2D => DEVICE_LOCAL_GBPS,
        }
    }

    /// The set-up of one copy (or one blit batch) at GPU scale, µs.
    pub fn setup_us(self) -> f64 {
        match self {
            CopyKind::DeviceD2D => BLIT_SETUP_US,
            _ => HOST_COPY_SETUP_US,
        }
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

    /// `bytes` copied as `kind` with `setups` set-ups (one per region for host copies, one per
    /// batch for blits).
    pub fn copy(&self, kind: CopyKind, bytes: u64, setups: u64) -> Duration {
        let gpu_us = setups as f64 * kind.setup_us() + bytes as f64 / (kind.gpu_gbps() * 1e3);
        self.scaled(gpu_us)
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

    /// The measured rates (GB/s) at 1, 8, 64, 512 MiB and 2 GiB for each kind.
    fn measured(kind: CopyKind) -> [f64; 5] {
        match kind {
            CopyKind::FreshHostD2H => [1.5, 1.6, 1.5, 1.6, 1.6],
            CopyKind::PinnedD2H => [33.5, 50.8, 54.2, 55.2, 55.3],
            CopyKind::PageableH2D => [7.7, 7.3, 7.2, 8.6, 8.5],
            CopyKind::PinnedH2D => [23.1, 47.6, 54.4, 55.3, 55.4],
            CopyKind::DeviceD2D => [54.0, 356.0, 974.0, 1832.0, 2074.0],
        }
    }

    #[test]
    fn every_modelled_rate_is_within_2x_of_the_measured_one_at_every_size() {
        let m = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS); // slowdown 1
        let sizes = [1u64 << 20, 8 << 20, 64 << 20, 512 << 20, 2 << 30];
        for kind in CopyKind::ALL {
            for (bytes, want) in sizes.iter().zip(measured(kind)) {
                let got = *bytes as f64 / m.copy(kind, *bytes, 1).as_secs_f64() / 1e9;
                let r = got / want;
                assert!(
                    (0.5..=2.0).contains(&r),
                    "{kind:?} {bytes}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn the_slowdown_stretches_every_cost_by_one_factor() {
        let fast = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS);
        let slow = CostModel::new(SdkBuild::default(), DEVICE_LOCAL_GBPS / 100.0);
        assert!((slow.slowdown - 100.0).abs() < 1e-9);
        let r = slow.drain_signal().as_secs_f64() / fast.drain_signal().as_secs_f64();
        assert!((r - 100.0).abs() < 1e-6);
        let d2d = slow.copy(CopyKind::DeviceD2D, 1 << 30, 0).as_secs_f64();
        assert!((d2d - (1u64 << 30) as f64 / (DEVICE_LOCAL_GBPS / 100.0 * 1e9)).abs() < 1e-9);
        let pooled = SdkBuild::parse("signal-pool").unwrap();
        assert_eq!(CostModel::new(pooled, 1.0).drain_signal(), Duration::ZERO);
    }
}
