//! The callback-tracing kinds table for each emulated SDK build (`--replay-kind`). The stable
//! kinds keep their numbers; KERNEL_REPLAY goes where each source tree appends it, so its number
//! differs between builds: 23 (the early fork, right after HIP_GRAPH), 25 (after HIPFILE_API,
//! the last stable kind) or 26 (after a new HIP_EVENT at 25). A tool must find it by name.

use std::sync::OnceLock;

/// Kinds 0..=24 as in the stable `fwd.h`.
const STABLE: [&str; 25] = [
    "NONE",
    "HSA_CORE_API",
    "HSA_AMD_EXT_API",
    "HSA_IMAGE_EXT_API",
    "HSA_FINALIZE_EXT_API",
    "HIP_RUNTIME_API",
    "HIP_COMPILER_API",
    "MARKER_CORE_API",
    "MARKER_CONTROL_API",
    "MARKER_NAME_API",
    "CODE_OBJECT",
    "SCRATCH_MEMORY",
    "KERNEL_DISPATCH",
    "MEMORY_COPY",
    "RCCL_API",
    "OMPT",
    "MEMORY_ALLOCATION",
    "RUNTIME_INITIALIZATION",
    "ROCDECODE_API",
    "ROCJPEG_API",
    "HIP_STREAM",
    "MARKER_CORE_RANGE_API",
    "HIP_GRAPH",
    "ROCSHMEM_API",
    "HIPFILE_API",
];

pub struct KindTable {
    /// Names indexed by kind number; `names.len()` is LAST.
    pub names: Vec<&'static str>,
    pub kernel_replay: u32,
    pub range_replay: Option<u32>,
}

impl KindTable {
    /// 23: the early fork (after HIP_GRAPH, LAST 24); 25: after HIPFILE_API, then RANGE_REPLAY
    /// (LAST 27); 26: HIP_EVENT first, then KERNEL_REPLAY and RANGE_REPLAY (LAST 28).
    pub fn new(replay_kind: u32) -> KindTable {
        let mut names: Vec<&'static str> = match replay_kind {
            23 => STABLE[..23].to_vec(),
            26 => {
                let mut v = STABLE.to_vec();
                v.push("HIP_EVENT");
                v
            }
            _ => STABLE.to_vec(),
        };
        let kernel_replay = names.len() as u32;
        names.push("KERNEL_REPLAY");
        let range_replay = if replay_kind == 23 {
            None
        } else {
            names.push("RANGE_REPLAY");
            Some(kernel_replay + 1)
        };
        KindTable {
            names,
            kernel_replay,
            range_replay,
        }
    }

    pub fn last(&self) -> u32 {
        self.names.len() as u32
    }

    pub fn name(&self, kind: u32) -> Option<&'static str> {
        self.names.get(kind as usize).copied()
    }

    /// Operation names of a kind (index = operation number, NONE included). Kinds the emulator
    /// does not trace list only their NONE operation.
    pub fn operations(&self, kind: u32) -> Vec<String> {
        let Some(k) = self.name(kind) else {
            return Vec::new();
        };
        let ops: &[&str] = match k {
            "KERNEL_DISPATCH" => &["NONE", "ENQUEUE", "COMPLETE"],
            "MEMORY_ALLOCATION" => &["NONE", "ALLOCATE", "VMEM_ALLOCATE", "FREE", "VMEM_FREE"],
            "CODE_OBJECT" => &[
                "NONE",
                "LOAD",
                "DEVICE_KERNEL_SYMBOL_REGISTER",
                "HOST_KERNEL_SYMBOL_REGISTER",
            ],
            "KERNEL_REPLAY" => &["NONE", "CONFIG", "PASS"],
            "RANGE_REPLAY" => &["NONE", "CONFIG", "PASS", "CLOSE"],
            _ => &["NONE"],
        };
        ops.iter().map(|o| format!("{k}_{o}")).collect()
    }
}

static TABLE: OnceLock<KindTable> = OnceLock::new();

/// Fixes the table for this process (before any tool is loaded).
pub fn init(replay_kind: u32) {
    let _ = TABLE.set(KindTable::new(replay_kind));
}

pub fn table() -> &'static KindTable {
    TABLE.get_or_init(|| KindTable::new(25))
}

/// Operation numbers of the KERNEL_REPLAY kind (stable in every version seen).
pub mod replay_op {
    pub const NONE: i32 = 0;
    pub const CONFIG: i32 = 1;
    pub const PASS: i32 = 2;
}

/// NUL-terminated names for the C query functions, built once from the fixed table.
pub struct CNames {
    pub kinds: Vec<std::ffi::CString>,
    pub ops: Vec<Vec<std::ffi::CString>>,
}

pub fn c_names() -> &'static CNames {
    static NAMES: OnceLock<CNames> = OnceLock::new();
    NAMES.get_or_init(|| {
        let t = table();
        let cs = |s: &str| std::ffi::CString::new(s).expect("names have no NUL");
        CNames {
            kinds: t.names.iter().map(|n| cs(n)).collect(),
            ops: (0..t.last())
                .map(|k| t.operations(k).iter().map(|o| cs(o)).collect())
                .collect(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_kind_positions() {
        for (k, last) in [(23, 24), (25, 27), (26, 28)] {
            let t = KindTable::new(k);
            assert_eq!(t.kernel_replay, k);
            assert_eq!(t.name(k), Some("KERNEL_REPLAY"));
            assert_eq!(t.last(), last);
        }
        assert_eq!(KindTable::new(26).name(25), Some("HIP_EVENT"));
        assert_eq!(KindTable::new(25).operations(25)[2], "KERNEL_REPLAY_PASS");
    }
}
