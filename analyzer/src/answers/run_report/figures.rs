//! The run's figures beside its phases, from the tally: the groups of dispatches and their share of
//! the wall time, bytes moved and at what rate, GPU time per pass and of the window, and the
//! non-replayed dispatch tax.

use super::tally::WindowTally;
use super::{Bytes, Gpu, Group, PassGpu, Tax};
use crate::db::basis::Basis;
use crate::db::summary::{PassSummary, PlainSummary};
use crate::stats::ratio;

pub(super) fn groups(
    t: &WindowTally,
    window_total: i64,
    plain: &PlainSummary,
    wall: f64,
) -> Vec<Group> {
    let group = |name: &str, count: u64, total_ns: i64| Group {
        group: name.into(),
        count,
        total_ns,
        share_of_wall: ratio(total_ns as f64, wall),
        basis: Basis::InProcess,
    };
    vec![
        group("replayed", t.replayed, window_total),
        group("declined", t.declined, t.declined_ns),
        group("no CONFIG", plain.without_config, plain.without_config_ns),
    ]
}

pub(super) fn bytes(t: &WindowTally, total_of: impl Fn(&str) -> i64) -> Bytes {
    let snapshot_time = if t.log_joined {
        total_of("snapshot")
    } else {
        total_of("pre-pass")
    };
    Bytes {
        snapshot_bytes_total: t.snapshot_bytes,
        snapshot_bytes_per_window: (t.replayed > 0)
            .then(|| t.snapshot_bytes as f64 / t.replayed as f64),
        snapshot_bytes_basis: t.bytes_bases.keys().copied().collect(),
        snapshot_gbps: ratio(t.snapshot_bytes as f64, snapshot_time as f64),
        snapshot_gbps_over: if t.log_joined {
            "sdk snapshot time"
        } else {
            "pre-pass (lower bound)"
        },
        snapshot_gbps_basis: if t.log_joined {
            Basis::SdkLog
        } else {
            Basis::Estimate
        },
        restore_bytes_total: t.restore_bytes,
        restore_gbps: ratio(t.restore_bytes as f64, total_of("restore") as f64),
        restore_basis: Basis::Estimate,
    }
}

/// Per pass index: mean host and GPU time of its passes.
pub(super) fn per_pass_gpu(passes: &[PassSummary]) -> Vec<PassGpu> {
    passes
        .iter()
        .map(|p| {
            let host = (p.host_passes > 0).then(|| p.host_ns as f64 / p.host_passes as f64);
            let gpu = p.gpu_ns as f64 / p.passes as f64;
            PassGpu {
                pass_index: p.pass_index,
                passes: p.passes,
                host_mean_ns: host,
                gpu_mean_ns: gpu,
                gpu_share: host.and_then(|h| ratio(gpu, h)),
            }
        })
        .collect()
}

pub(super) fn gpu(per_pass: Vec<PassGpu>, total_of: impl Fn(&str) -> i64) -> Gpu {
    let gpu_total = total_of("gpu");
    let pass_total = total_of("pass exec");
    let window_total = total_of("window");
    Gpu {
        per_pass,
        gpu_total_ns: gpu_total,
        pass_total_ns: pass_total,
        window_total_ns: window_total,
        gpu_share_of_pass: ratio(gpu_total as f64, pass_total as f64),
        gpu_share_of_window: ratio(gpu_total as f64, window_total as f64),
        basis: Basis::InProcess,
    }
}

pub(super) fn dispatch_tax(t: &WindowTally, plain: &PlainSummary) -> Tax {
    Tax {
        plain_dispatches: plain.all,
        plain_enqueue_mean_ns: (plain.timed > 0)
            .then(|| plain.timed_ns.unwrap_or(0) as f64 / plain.timed as f64),
        opt_out_windows: t.opt_out_windows,
        opt_out_config_mean_ns: (t.opt_out_windows > 0)
            .then(|| t.opt_out_ns as f64 / t.opt_out_windows as f64),
        basis: Basis::InProcess,
    }
}
