//! One code object (an AMDGPU ELF) as the loader sees it: each kernel's descriptor symbol
//! (`<mangled>.kd`, an OBJECT symbol of 64 bytes) with its descriptor, and the module variables
//! (the other defined, global OBJECT symbols).

use super::descriptor::{self, Descriptor};
use object::{Object, ObjectSection, ObjectSymbol, SymbolKind, SymbolScope};

/// One kernel of a code object.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The descriptor's symbol name, `.kd` kept: what `HSA_EXECUTABLE_SYMBOL_INFO_NAME` gives.
    pub symbol: String,
    /// The descriptor's address in the code object (its symbol's value).
    pub address: u64,
    pub descriptor: Descriptor,
}

/// One module-scope variable of a code object.
#[derive(Debug, Clone)]
pub struct Variable {
    pub name: String,
    pub size: u64,
}

#[derive(Debug, Clone, Default)]
pub struct CodeObject {
    pub kernels: Vec<Kernel>,
    pub variables: Vec<Variable>,
}

/// Parses an AMDGPU code object; the error says what is wrong with it in a few words.
pub fn parse(bytes: &[u8]) -> Result<CodeObject, String> {
    let file = object::File::parse(bytes).map_err(|e| format!("not an ELF file ({e})"))?;
    let machine = match &file {
        object::File::Elf64(f) => f.elf_header().e_machine.get(f.endian()),
        _ => return Err("not a 64-bit ELF file".into()),
    };
    if machine != object::elf::EM_AMDGPU {
        return Err(format!("ELF machine {machine:?}, not AMDGPU"));
    }
    let mut co = CodeObject::default();
    for s in file.symbols() {
        if s.kind() != SymbolKind::Data || s.is_undefined() || s.scope() != SymbolScope::Dynamic {
            continue;
        }
        let name = s
            .name()
            .map_err(|e| format!("a symbol name is unreadable ({e})"))?;
        if name.ends_with(".kd") {
            let section = s
                .section_index()
                .and_then(|i| file.section_by_index(i).ok())
                .ok_or_else(|| format!("{name} has no section"))?;
            let data = section
                .data()
                .map_err(|e| format!("{name}'s section is unreadable ({e})"))?;
            let at = s.address().wrapping_sub(section.address()) as usize;
            let descriptor = data
                .get(at..at.saturating_add(descriptor::SIZE))
                .and_then(Descriptor::parse)
                .ok_or_else(|| format!("{name}'s 64-byte descriptor is outside its section"))?;
            co.kernels.push(Kernel {
                symbol: name.to_string(),
                address: s.address(),
                descriptor,
            });
        } else if !s.is_weak() {
            co.variables.push(Variable {
                name: name.to_string(),
                size: s.size(),
            });
        }
    }
    if co.kernels.is_empty() {
        return Err("no kernel descriptor symbol (*.kd)".into());
    }
    Ok(co)
}
