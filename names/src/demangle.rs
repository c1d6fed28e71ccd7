//! `.kd` stripped, then demangled: the default form of a kernel name.

use cpp_demangle::{DemangleOptions, Symbol};

/// The kernel-descriptor suffix ROCr's symbol names carry (`HSA_EXECUTABLE_SYMBOL_INFO_NAME`).
const KD: &str = ".kd";

/// `name` with one trailing `.kd` removed (rocprofv3's `(\.kd)$`), then demangled by the Itanium
/// C++ ABI. A name that is not a mangled C++ name (an `extern "C"` kernel, a plain test name)
/// comes back as it is, without the `.kd`, as `c++filt` and rocprofv3 leave it.
pub fn demangle_symbol(name: &str) -> String {
    let bare = name.strip_suffix(KD).unwrap_or(name);
    Symbol::new(bare.as_bytes())
        .ok()
        .and_then(|s| s.demangle_with_options(&DemangleOptions::default()).ok())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| bare.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_then_demangles() {
        assert_eq!(
            demangle_symbol("_ZN2ns5saxpyEPfPKffi.kd"),
            "ns::saxpy(float*, float const*, float, int)"
        );
        assert_eq!(demangle_symbol("names_plain.kd"), "names_plain");
        assert_eq!(demangle_symbol("saxpy"), "saxpy");
        // Only one trailing `.kd` goes, as `(\.kd)$` removes one.
        assert_eq!(demangle_symbol("a.kd.kd"), "a.kd");
        assert_eq!(demangle_symbol(""), "");
    }
}
