//! The workloads' real code objects: every kernel registered from the ELF that Debian's hipcc
//! built from its HIP source (`kernels/hip/code-objects/`), under its descriptor symbol's name
//! (mangled, `.kd` kept) with its sizes and registers decoded from the descriptor as the SDK
//! does. By default the gfx940 code-object-v5 set built into the emulator (the nearest target
//! clang-15 builds to the emulated gfx942; both are gfx94x, decoded alike); `--code-objects DIR`
//! reads `DIR/<source>.co` instead (another target or version of the fixtures).

pub mod descriptor;
pub mod elf;

use krphase_kernels::{KERNEL_NAMES, KERNEL_SYMBOLS};
use std::path::Path;
use std::sync::OnceLock;

/// The built-in set: (source, bytes) for every HIP source with kernels.
const BUILT_IN: &[(&str, &[u8])] = &[
    (
        "stream",
        include_bytes!("../../../hip/code-objects/gfx940-v5/stream.co"),
    ),
    (
        "saxpy",
        include_bytes!("../../../hip/code-objects/gfx940-v5/saxpy.co"),
    ),
    (
        "queue_depth",
        include_bytes!("../../../hip/code-objects/gfx940-v5/queue_depth.co"),
    ),
    (
        "multi_queue",
        include_bytes!("../../../hip/code-objects/gfx940-v5/multi_queue.co"),
    ),
    (
        "graph",
        include_bytes!("../../../hip/code-objects/gfx940-v5/graph.co"),
    ),
    (
        "multi_packet",
        include_bytes!("../../../hip/code-objects/gfx940-v5/multi_packet.co"),
    ),
    (
        "vmem",
        include_bytes!("../../../hip/code-objects/gfx940-v5/vmem.co"),
    ),
    (
        "samples",
        include_bytes!("../../../hip/code-objects/gfx940-v5/samples.co"),
    ),
    (
        "names",
        include_bytes!("../../../hip/code-objects/gfx940-v5/names.co"),
    ),
];

/// Where the set came from, for the truth line.
pub const BUILT_IN_SET: &str = "gfx940-v5 (built in)";

/// Each source's code object, in `BUILT_IN`'s order, with where it came from.
pub struct Loaded {
    pub origin: String,
    pub objects: Vec<(&'static str, elf::CodeObject)>,
}

static LOADED: OnceLock<Loaded> = OnceLock::new();

/// Chooses and parses the set (once, at start): the built-in one, or `dir`'s. Every workload
/// kernel must be in its source's code object. The error is one line.
pub fn select(dir: Option<&Path>) -> Result<(), String> {
    let mut objects = Vec::with_capacity(BUILT_IN.len());
    for (source, bytes) in BUILT_IN {
        let parsed = match dir {
            None => elf::parse(bytes),
            Some(d) => {
                let path = d.join(format!("{source}.co"));
                let bytes = std::fs::read(&path)
                    .map_err(|e| format!("--code-objects: cannot read {}: {e}", path.display()))?;
                elf::parse(&bytes)
            }
        }
        .map_err(|e| format!("--code-objects: {source}.co: {e}"))?;
        objects.push((*source, parsed));
    }
    for (name, (source, symbol)) in KERNEL_NAMES.iter().zip(KERNEL_SYMBOLS) {
        let found = objects
            .iter()
            .any(|(s, co)| *s == source && co.kernels.iter().any(|k| k.symbol == symbol));
        if !found {
            return Err(format!(
                "--code-objects: {source}.co has no kernel {symbol} (workload kernel {name})"
            ));
        }
    }
    let origin = dir.map_or_else(|| BUILT_IN_SET.to_string(), |d| d.display().to_string());
    // A second selection keeps the first (the process has one set of code objects).
    let _ = LOADED.set(Loaded { origin, objects });
    Ok(())
}

/// The set in use (the built-in one when nothing was selected).
pub fn loaded() -> &'static Loaded {
    if LOADED.get().is_none() {
        select(None).expect("the built-in code objects hold every workload kernel");
    }
    LOADED.get().expect("selected above")
}

/// A workload kernel (by its index in `KERNEL_NAMES`): its source's index in the set and its
/// kernel there.
pub fn kernel(index: usize) -> (usize, &'static elf::Kernel) {
    let (source, symbol) = KERNEL_SYMBOLS[index];
    let l = loaded();
    l.objects
        .iter()
        .enumerate()
        .find(|(_, (s, _))| *s == source)
        .and_then(|(i, (_, co))| {
            co.kernels
                .iter()
                .find(|k| k.symbol == symbol)
                .map(|k| (i, k))
        })
        .expect("select() checked every workload kernel")
}

/// The size of a module variable of `source`'s code object.
pub fn variable_size(source: &str, name: &str) -> Option<u64> {
    let (_, co) = loaded().objects.iter().find(|(s, _)| *s == source)?;
    co.variables.iter().find(|v| v.name == name).map(|v| v.size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_set_holds_every_kernel_with_its_descriptor() {
        select(None).unwrap();
        for (i, (_, symbol)) in KERNEL_SYMBOLS.iter().enumerate() {
            let (_, k) = kernel(i);
            assert_eq!(k.symbol, *symbol);
            assert!(k.descriptor.kernarg_size > 0, "{}", k.symbol);
            assert!(k.descriptor.kernel_code_entry_byte_offset != 0);
        }
        assert_eq!(variable_size("saxpy", "saxpy_calls"), Some(8));
    }
}
