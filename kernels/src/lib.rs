//! The device code of the krphase workloads, as CPU implementations over emulated device memory.
//!
//! Device memory is a slice of `AtomicU64` words (see `krphase-emu`), so a kernel body needs no
//! `unsafe` and may run on a queue worker thread while the host holds other references. Floating
//! point values are stored as their bit patterns. Each module mirrors one HIP source in `hip/`.
//! The host programs that launch these kernels live in the emulator (`krphase-emu`), which plays
//! the HIP runtime.

pub mod checksum;
pub mod device_memory;
pub mod samples;
pub mod saxpy;
pub mod steps;
pub mod stream;

/// Every kernel's name inside krphase (the workloads launch by it; the emulator's truth lines
/// carry it). The kernel id of a name is its index here plus one.
pub const KERNEL_NAMES: [&str; 19] = [
    "stream_copy",
    "stream_mul",
    "stream_add",
    "stream_triad",
    "stream_dot",
    "saxpy",
    "queue_depth_step",
    "multi_queue_step",
    "graph_node",
    "multi_packet_node",
    "vmem_touch",
    "bump",
    "nudge",
    "names_saxpy",
    "names_step_u64",
    "names_step_i64",
    "names_touch",
    "names_touch_by",
    "names_plain",
];

/// Each kernel of [`KERNEL_NAMES`] (same order): the HIP source it is in (`hip/<source>.hip`)
/// and the ELF symbol of its kernel descriptor in that source's code objects
/// (`hip/code-objects/`), which is the name the SDK's kernel-symbol record carries: mangled,
/// `.kd` kept.
pub const KERNEL_SYMBOLS: [(&str, &str); 19] = [
    ("stream", "_Z11stream_copyPKdPdm.kd"),
    ("stream", "_Z10stream_mulPdPKdm.kd"),
    ("stream", "_Z10stream_addPKdS0_Pdm.kd"),
    ("stream", "_Z12stream_triadPdPKdS1_m.kd"),
    ("stream", "_Z10stream_dotPKdS0_Pdm.kd"),
    ("saxpy", "_Z5saxpydPKdPdm.kd"),
    ("queue_depth", "_Z16queue_depth_stepPym.kd"),
    ("multi_queue", "_Z16multi_queue_stepPym.kd"),
    ("graph", "_Z10graph_nodePym.kd"),
    ("multi_packet", "_Z17multi_packet_nodePym.kd"),
    ("vmem", "_Z10vmem_touchPym.kd"),
    ("samples", "_Z4bumpPj.kd"),
    ("samples", "_Z5nudgePj.kd"),
    ("names", "_ZN3krp5saxpyEPym.kd"),
    ("names", "_Z4stepIyEvPT_m.kd"),
    ("names", "_Z4stepIxEvPT_m.kd"),
    ("names", "_Z5touchPym.kd"),
    ("names", "_Z5touchPymy.kd"),
    ("names", "names_plain.kd"),
];

/// The kernel-descriptor symbol of a kernel name (see [`KERNEL_SYMBOLS`]).
pub fn kernel_symbol(name: &str) -> Option<&'static str> {
    Some(KERNEL_SYMBOLS[kernel_id(name)? as usize - 1].1)
}

/// The device memory one work-item of `name` reads plus writes, bytes (f64 elements of 8 bytes;
/// a kernel's one-off writes, such as a call counter or a dot's sum, are left out). `None`
/// for the step and sample kernels, which touch a word or two: there is nothing to stream.
pub fn traffic_per_item(name: &str) -> Option<u64> {
    match name {
        "stream_copy" | "stream_mul" | "stream_dot" => Some(16),
        "stream_add" | "stream_triad" | "saxpy" => Some(24),
        _ => None,
    }
}

/// The kernel id of a kernel name (1-based), or `None` for an unknown name.
pub fn kernel_id(name: &str) -> Option<u64> {
    KERNEL_NAMES
        .iter()
        .position(|n| *n == name)
        .map(|i| i as u64 + 1)
}

/// The kernel name of a kernel id.
pub fn kernel_name(id: u64) -> Option<&'static str> {
    KERNEL_NAMES.get((id as usize).checked_sub(1)?).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for (i, n) in KERNEL_NAMES.iter().enumerate() {
            assert_eq!(kernel_id(n), Some(i as u64 + 1));
            assert_eq!(kernel_name(i as u64 + 1), Some(*n));
        }
        assert_eq!(kernel_id("nope"), None);
        assert_eq!(traffic_per_item("stream_triad"), Some(24));
        assert_eq!(traffic_per_item("bump"), None);
        assert_eq!(kernel_name(0), None);
        assert_eq!(kernel_symbol("saxpy"), Some("_Z5saxpydPKdPdm.kd"));
        assert_eq!(kernel_symbol("nope"), None);
    }
}
