//! What one snapshot or restore copies under the build's cost model, kind by kind: GPU-local
//! regions in one device-to-device batch, every other region through host staging with one
//! copy (and one set-up) per region. The plan's total is the duration the copy is paced to.

use super::cost_model::{CopyKind, CostModel};
use crate::memory::{Region, Snapshot};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A snapshot taken, with what each of its restores copies under the build's cost model
/// (`None` without `--sdk-build`).
pub(super) struct Taken {
    pub(super) snap: Snapshot,
    pub(super) restore: Option<CopyPlan>,
}

/// One kind of copy within a snapshot or restore.
pub(super) struct CopyPart {
    pub(super) kind: CopyKind,
    pub(super) bytes: u64,
    pub(super) regions: u64,
    /// Set-ups paid: one per region for host copies, one for the whole blit batch.
    pub(super) setups: u64,
    pub(super) model: Duration,
}

/// The parts of one snapshot or restore.
#[derive(Default)]
pub(super) struct CopyPlan {
    pub(super) parts: Vec<CopyPart>,
}

impl CopyPlan {
    fn push(&mut self, m: &CostModel, kind: CopyKind, bytes: u64, regions: u64) {
        if regions == 0 {
            return;
        }
        let setups = if kind == CopyKind::DeviceD2D {
            1
        } else {
            regions
        };
        self.parts.push(CopyPart {
            kind,
            bytes,
            regions,
            setups,
            model: m.copy(kind, bytes, setups),
        });
    }

    /// The modelled duration of the whole copy.
    pub(super) fn total(&self) -> Duration {
        self.parts.iter().map(|p| p.model).sum()
    }

    /// Regions and bytes copied GPU-local (device-to-device).
    pub(super) fn gpu_local(&self) -> (u64, u64) {
        self.parts
            .iter()
            .filter(|p| p.kind == CopyKind::DeviceD2D)
            .fold((0, 0), |(r, b), p| (r + p.regions, b + p.bytes))
    }

    /// The parts as the truth file gives them.
    pub(super) fn truth(&self) -> Value {
        Value::Array(
            self.parts
                .iter()
                .map(|p| {
                    json!({"kind": p.kind.name(), "bytes": p.bytes, "regions": p.regions,
                        "setups": p.setups, "model_ns": p.model.as_nanos() as u64})
                })
                .collect(),
        )
    }
}

/// The snapshot's copies: the regions with GPU-local backing (`gpu_local[i]`) in one batch, the
/// rest through host staging.
pub(super) fn snapshot_plan(
    m: &CostModel,
    regions: &[Arc<Region>],
    gpu_local: &[bool],
) -> CopyPlan {
    let (mut local, mut host) = ((0, 0), (0, 0));
    for (r, on_gpu) in regions
        .iter()
        .zip(gpu_local.iter().chain(std::iter::repeat(&false)))
    {
        let t = if *on_gpu { &mut local } else { &mut host };
        *t = (t.0 + r.bytes, t.1 + 1);
    }
    let mut plan = CopyPlan::default();
    plan.push(m, CopyKind::DeviceD2D, local.0, local.1);
    plan.push(m, m.host_snapshot_kind(), host.0, host.1);
    plan
}

/// Each restore copies what the snapshot copied, back the same way: blits for GPU-local
/// regions, the build's host-to-device copy for host-staged ones.
pub(super) fn restore_plan(m: &CostModel, snapshot: &CopyPlan) -> CopyPlan {
    let mut plan = CopyPlan::default();
    for p in &snapshot.parts {
        let kind = if p.kind == CopyKind::DeviceD2D {
            CopyKind::DeviceD2D
        } else {
            m.host_restore_kind()
        };
        plan.push(m, kind, p.bytes, p.regions);
    }
    plan
}
