//! The 64-byte AMDHSA kernel descriptor, decoded as the SDK decodes it for the kernel-symbol
//! record (`code_object.cpp` `arch_vgpr_count`, `accum_vgpr_count`, `sgpr_count`,
//! rocprofiler-sdk @05a9e5c8): granulated counts from `compute_pgm_rsrc1`/`rsrc3`, not the
//! metadata's `.vgpr_count`.

/// A kernel descriptor's size in bytes.
pub const SIZE: usize = 64;

/// The fields of a kernel descriptor the kernel-symbol record is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    /// Byte offset of the kernel's code from the descriptor (may be negative).
    pub kernel_code_entry_byte_offset: i64,
    pub compute_pgm_rsrc3: u32,
    pub compute_pgm_rsrc1: u32,
    pub kernel_code_properties: u16,
}

impl Descriptor {
    /// Reads the descriptor's little-endian fields at their offsets (group 0, private 4,
    /// kernarg 8, entry 16, rsrc3 44, rsrc1 48, properties 56); `None` below 64 bytes.
    pub fn parse(b: &[u8]) -> Option<Descriptor> {
        let b = b.get(..SIZE)?;
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        Some(Descriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            kernel_code_entry_byte_offset: i64::from_le_bytes(
                b[16..24].try_into().expect("8 bytes"),
            ),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            kernel_code_properties: u16::from_le_bytes([b[56], b[57]]),
        })
    }

    /// `GRANULATED_WORKITEM_VGPR_COUNT`, rsrc1 bits 0–5.
    fn vgpr_granules(&self) -> u32 {
        self.compute_pgm_rsrc1 & 0x3f
    }

    /// Architectural VGPRs: on gfx90a and gfx94x `(ACCUM_OFFSET + 1) × 4` (rsrc3 bits 0–5);
    /// elsewhere `(granules + 1) × 4`, or × 8 for wave32 kernels.
    pub fn arch_vgpr_count(&self, gpu: &str) -> u32 {
        if unified_vgprs(gpu) {
            return ((self.compute_pgm_rsrc3 & 0x3f) + 1) * 4;
        }
        let wave32 = self.kernel_code_properties & (1 << 10) != 0;
        (self.vgpr_granules() + 1) * if wave32 { 8 } else { 4 }
    }

    /// Accumulation VGPRs: on gfx908 as many as the architectural ones; on gfx90a and gfx94x
    /// the unified file `(granules + 1) × 8` less the architectural ones; elsewhere 0.
    pub fn accum_vgpr_count(&self, gpu: &str) -> u32 {
        if gpu == "gfx908" {
            self.arch_vgpr_count(gpu)
        } else if unified_vgprs(gpu) {
            ((self.vgpr_granules() + 1) * 8).saturating_sub(self.arch_vgpr_count(gpu))
        } else {
            0
        }
    }

    /// SGPRs: 128 on gfx10 and later; before, `(GRANULATED_WAVEFRONT_SGPR_COUNT / 2 + 1) × 16`
    /// (rsrc1 bits 6–9).
    pub fn sgpr_count(&self, gpu: &str) -> u32 {
        let digits: String = gpu
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        match digits.parse::<u32>() {
            Ok(n) if n >= 1000 => 128,
            Ok(_) => (((self.compute_pgm_rsrc1 >> 6) & 0xf) / 2 + 1) * 16,
            Err(_) => 0,
        }
    }
}

/// gfx90a and the gfx94x family share one VGPR file between architectural and accumulation
/// registers.
fn unified_vgprs(gpu: &str) -> bool {
    gpu == "gfx90a" || gpu.starts_with("gfx94")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(rsrc1: u32, rsrc3: u32, props: u16) -> Descriptor {
        let mut b = [0u8; SIZE];
        b[8..12].copy_from_slice(&32u32.to_le_bytes());
        b[16..24].copy_from_slice(&(-64i64).to_le_bytes());
        b[44..48].copy_from_slice(&rsrc3.to_le_bytes());
        b[48..52].copy_from_slice(&rsrc1.to_le_bytes());
        b[56..58].copy_from_slice(&props.to_le_bytes());
        Descriptor::parse(&b).unwrap()
    }

    #[test]
    fn decodes_as_the_sdk() {
        // rsrc1: 3 VGPR granules, 5 SGPR granules; rsrc3: accum offset 1.
        let d = with(3 | (5 << 6), 1, 0);
        assert_eq!(d.kernarg_size, 32);
        assert_eq!(d.kernel_code_entry_byte_offset, -64);
        assert_eq!(d.arch_vgpr_count("gfx942"), 8);
        assert_eq!(d.accum_vgpr_count("gfx942"), 32 - 8);
        assert_eq!(d.sgpr_count("gfx942"), 48);
        assert_eq!(d.arch_vgpr_count("gfx906"), 16);
        assert_eq!(d.accum_vgpr_count("gfx906"), 0);
        assert_eq!(d.accum_vgpr_count("gfx908"), 16);
        assert_eq!(with(3, 0, 1 << 10).arch_vgpr_count("gfx1030"), 32);
        assert_eq!(d.sgpr_count("gfx1030"), 128);
        assert!(Descriptor::parse(&[0; 63]).is_none());
    }
}
