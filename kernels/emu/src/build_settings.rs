//! `--sdk-build` and its options resolved once at start-up: the build, this machine's memcpy
//! rate (given, or measured) and the slow-down factor that follows, the compilation-unit
//! markers, and the device memory the device-side build's backing must fit in. Said once on
//! stderr and once in the truth file.

use crate::device_backing::DEFAULT_DEVICE_MEMORY;
use crate::memcpy_rate;
use crate::opts::{DeviceFallback, RestoreOrder, RunOpts};
use crate::replay::cost_model::{CostModel, DEVICE_LOCAL_GBPS};
use crate::replay::sdk_build::SdkBuild;
use crate::truth;
use serde_json::json;

/// HIP compilation-unit markers by default: one per loaded code object of an application
/// that loads its own code object and seven of its libraries'.
pub const DEFAULT_CU_MARKERS: u32 = 8;
/// The most markers `--cu-markers` takes.
pub const MAX_CU_MARKERS: u32 = 4096;

/// The build options of a run.
#[derive(Debug, Clone, Copy)]
pub struct BuildSettings {
    pub model: CostModel,
    /// Whether the memcpy rate was measured (or given).
    pub measured: bool,
    pub cu_markers: u32,
    pub device_memory: u64,
    pub device_fallback: DeviceFallback,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The options that only mean something with `--sdk-build` (or with its device-side switch).
fn check_dependent(o: &RunOpts, build: Option<SdkBuild>) -> Result<(), String> {
    let Some(b) = build else {
        if o.device_gbps.is_some()
            || o.cu_markers.is_some()
            || o.device_memory.is_some()
            || o.device_fallback.is_some()
        {
            return Err(
                "--device-gbps, --cu-markers, --device-memory and --device-fallback need --sdk-build"
                    .into(),
            );
        }
        return Ok(());
    };
    if o.link_gbps.is_some() {
        return Err(
            "--link-gbps paces copies only without --sdk-build; a build's cost model paces them from --device-gbps"
                .into(),
        );
    }
    if !b.device_side && (o.device_memory.is_some() || o.device_fallback.is_some()) {
        return Err(
            "--device-memory and --device-fallback need --sdk-build with device-side".into(),
        );
    }
    if b.device_side && o.restore_order == Some(RestoreOrder::Host) {
        return Err(
            "--restore-order host contradicts --sdk-build device-side (its restores are blits ahead of the next pass)"
                .into(),
        );
    }
    if o.cu_markers.is_some_and(|n| n == 0 || n > MAX_CU_MARKERS) {
        return Err(format!("--cu-markers must be 1 to {MAX_CU_MARKERS}"));
    }
    Ok(())
}

/// The memcpy rate: `--device-gbps`, else `KRPHASE_EMU_DEVICE_GBPS`, else measured.
fn device_gbps(o: &RunOpts) -> Result<(f64, bool), String> {
    let given = match (o.device_gbps, env("KRPHASE_EMU_DEVICE_GBPS")) {
        (Some(g), _) => Some(g),
        (None, Some(v)) => Some(
            v.trim()
                .parse::<f64>()
                .map_err(|_| format!("KRPHASE_EMU_DEVICE_GBPS={v:?} is not a rate in GB/s"))?,
        ),
        (None, None) => None,
    };
    match given {
        Some(g) if g > 0.0 && g.is_finite() && g <= DEVICE_LOCAL_GBPS => Ok((g, false)),
        Some(g) => Err(format!(
            "the device-local rate must be above 0 and at most {DEVICE_LOCAL_GBPS} GB/s, got {g}"
        )),
        None => Ok((memcpy_rate::measure_gbps(), true)),
    }
}

/// Resolves `--sdk-build` (or `KRPHASE_EMU_SDK_BUILD`) and its options; `None` without one.
pub fn resolve(o: &RunOpts) -> Result<Option<BuildSettings>, String> {
    let list = o.sdk_build.clone().or_else(|| env("KRPHASE_EMU_SDK_BUILD"));
    let build = list.as_deref().map(SdkBuild::parse).transpose()?;
    check_dependent(o, build)?;
    let Some(build) = build else {
        return Ok(None);
    };
    let (gbps, measured) = device_gbps(o)?;
    Ok(Some(BuildSettings {
        model: CostModel::new(build, gbps),
        measured,
        cu_markers: o.cu_markers.unwrap_or(DEFAULT_CU_MARKERS),
        device_memory: o.device_memory.unwrap_or(DEFAULT_DEVICE_MEMORY),
        device_fallback: o.device_fallback.unwrap_or(DeviceFallback::Host),
    }))
}

/// One stderr line and one truth line saying the build, the rate and the slow-down factor.
pub fn announce(s: &BuildSettings) {
    let m = &s.model;
    let how = if s.measured {
        memcpy_rate::METHOD
    } else {
        "given"
    };
    eprintln!(
        "krphase-emu: sdk build {}: device-local copies run at this machine's memcpy rate, {:.2} GB/s ({how}), standing for {DEVICE_LOCAL_GBPS} GB/s: the emulated device runs {:.0}x slower than a GPU",
        m.build.label(),
        m.device_gbps,
        m.slowdown
    );
    truth::write(&json!({
        "type": "sdk_build", "pid": std::process::id(), "build": m.build.label(),
        "signal_pool": m.build.signal_pool, "skip_cu_markers": m.build.skip_cu_markers,
        "keep_staging": m.build.keep_staging, "device_side": m.build.device_side,
        "device_gbps": m.device_gbps, "device_gbps_measured": s.measured,
        "device_local_gpu_gbps": DEVICE_LOCAL_GBPS, "slowdown": m.slowdown,
        "host_staging": if m.build.keep_staging { "pinned, kept" } else { "fresh pageable pages" },
        "restore_placement": if m.build.device_side { "in_pass" } else { "gap" },
        "cu_markers": s.cu_markers, "device_memory": s.device_memory,
        "device_fallback": match s.device_fallback { DeviceFallback::Host => "host", DeviceFallback::Decline => "decline" },
    }));
}
