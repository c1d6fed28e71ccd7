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
    /// Bytes of each region it copies.
    pub(super) sizes: Vec<u64>,
    /// Copy calls made: one per region for host copies, one for the whole blit batch.
    pub(super) calls: u64,
    pub(super) model: Duration,
}

/// The parts of one snapshot or restore.
#[derive(Default)]
pub(super) struct CopyPlan {
    pub(super) parts: Vec<CopyPart>,
}

impl CopyPlan {
    fn push(&mut self, m: &CostModel, kind: CopyKind, sizes: Vec<u64>) {
        if sizes.is_empty() {
            return;
        }
        let (calls, model) = if kind == CopyKind::DeviceD2D {
            (1, m.copies(kind, [sizes.iter().sum()]))
        } else {
            (sizes.len() as u64, m.copies(kind, sizes.iter().copied()))
        };
        self.parts.push(CopyPart {
            kind,
            sizes,
            calls,
            model,
        });
    }

    /// The modelled duration of the whole copy.
    pub(super) fn total(&self) -> Duration {
        self.parts.iter().map(|p| p.model).sum()
    }

    /// Regions copied GPU-local (device-to-device).
    pub(super) fn gpu_local_regions(&self) -> u64 {
        self.parts
            .iter()
            .filter(|p| p.kind == CopyKind::DeviceD2D)
            .map(|p| p.sizes.len() as u64)
            .sum()
    }

    /// The parts as the truth file gives them.
    pub(super) fn truth(&self) -> Value {
        Value::Array(
            self.parts
                .iter()
                .map(|p| {
                    json!({"kind": p.kind.name(), "bytes": p.sizes.iter().sum::<u64>(),
                        "regions": p.sizes.len(), "calls": p.calls,
                        "model_ns": p.model.as_nanos() as u64})
                })
                .collect(),
        )
    }
}

/// The snapshot's copies: the regions with GPU-local backing (`gpu_local[i]`) in one batch, the
/// rest through host staging, one copy per region.
pub(super) fn snapshot_plan(
    m: &CostModel,
    regions: &[Arc<Region>],
    gpu_local: &[bool],
) -> CopyPlan {
    let (mut local, mut host) = (Vec::new(), Vec::new());
    for (r, on_gpu) in regions
        .iter()
        .zip(gpu_local.iter().chain(std::iter::repeat(&false)))
    {
        if *on_gpu { &mut local } else { &mut host }.push(r.bytes);
    }
    let mut plan = CopyPlan::default();
    plan.push(m, CopyKind::DeviceD2D, local);
    plan.push(m, m.host_snapshot_kind(), host);
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
        plan.push(m, kind, p.sizes.clone());
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::module_variable;
    use crate::replay::sdk_build::SdkBuild;

    #[test]
    fn gpu_local_regions_go_in_one_blit_and_the_rest_per_region_through_host_staging() {
        let m = CostModel::new(SdkBuild::parse("device-side").unwrap(), 4.0);
        let regions: Vec<_> = [1 << 20, 1 << 20, 8]
            .iter()
            .map(|b| module_variable("plan_test", *b, 55, true))
            .collect();
        let snap = snapshot_plan(&m, &regions, &[true, false, true]);
        let kinds: Vec<_> = snap
            .parts
            .iter()
            .map(|p| (p.kind, p.sizes.clone(), p.calls))
            .collect();
        assert_eq!(
            kinds,
            [
                (CopyKind::DeviceD2D, vec![1 << 20, 8], 1),
                (CopyKind::FreshHostD2H, vec![1 << 20], 1),
            ]
        );
        assert_eq!(snap.gpu_local_regions(), 2);
        let want = m.copies(CopyKind::DeviceD2D, [(1 << 20) + 8])
            + m.copies(CopyKind::FreshHostD2H, [1 << 20]);
        assert_eq!(snap.total(), want);
        let back = restore_plan(&m, &snap);
        let kinds: Vec<_> = back.parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [CopyKind::DeviceD2D, CopyKind::PageableH2D]);
        let kept = CostModel::new(SdkBuild::parse("keep-staging").unwrap(), 4.0);
        let host = snapshot_plan(&kept, &regions, &[]);
        assert_eq!(host.parts.len(), 1);
        assert_eq!(
            (host.parts[0].kind, host.parts[0].calls),
            (CopyKind::PinnedD2H, 3)
        );
        assert_eq!(
            restore_plan(&kept, &host).parts[0].kind,
            CopyKind::PinnedH2D
        );
    }
}
