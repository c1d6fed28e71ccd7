//! Which form of a kernel name is shown and filtered: rocprofv3's three.

use crate::{demangle_symbol, truncate};

/// The form of a kernel name, as rocprofv3's options choose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameForm {
    /// `.kd` stripped, then demangled (rocprofv3's default).
    #[default]
    Demangled,
    /// Demangled, then cut to the function name (`--truncate-kernels`).
    Truncated,
    /// The raw symbol name, `.kd` included (`--mangled-kernels`).
    Mangled,
}

impl NameForm {
    /// The form rocprofv3's two switches give: truncation wins over `--mangled-kernels`, as in
    /// its `format_name` (truncating always demangles first).
    pub fn from_switches(truncate: bool, mangled: bool) -> NameForm {
        match (truncate, mangled) {
            (true, _) => NameForm::Truncated,
            (false, true) => NameForm::Mangled,
            (false, false) => NameForm::Demangled,
        }
    }

    /// The name of the form in messages and headers.
    pub fn as_str(self) -> &'static str {
        match self {
            NameForm::Demangled => "demangled",
            NameForm::Truncated => "truncated",
            NameForm::Mangled => "mangled",
        }
    }
}

/// `raw` (the SDK's kernel-symbol name) in `form`.
pub fn format(raw: &str, form: NameForm) -> String {
    match form {
        NameForm::Mangled => raw.to_string(),
        NameForm::Demangled => demangle_symbol(raw),
        NameForm::Truncated => truncate(&demangle_symbol(raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_forms() {
        let raw = "_Z4stepIxEvPT_m.kd";
        assert_eq!(
            format(raw, NameForm::Demangled),
            "void step<long long>(long long*, unsigned long)"
        );
        assert_eq!(format(raw, NameForm::Truncated), "step");
        assert_eq!(format(raw, NameForm::Mangled), raw);
        assert_eq!(NameForm::from_switches(true, true), NameForm::Truncated);
        assert_eq!(NameForm::from_switches(false, true), NameForm::Mangled);
        assert_eq!(NameForm::from_switches(false, false), NameForm::Demangled);
    }
}
