//! rocprofv3's kernel include/exclude filter: regex searches on the formatted name.

use crate::{NameForm, format};
use regex::Regex;
use regex_syntax::ast::ErrorKind;

/// An include regex, an optional exclude regex and the name form both see. A kernel is selected
/// when the include pattern is found in its formatted name and the exclude pattern is not
/// (rocprofv3: include `.*` by default, an empty exclude excludes nothing).
#[derive(Debug, Clone)]
pub struct KernelFilter {
    include: Option<Regex>,
    exclude: Option<Regex>,
    form: NameForm,
}

impl KernelFilter {
    /// A filter from the two patterns (`None` or empty: select all / exclude none). The error is
    /// one line naming the pattern's problem (see [`compile_pattern`]).
    pub fn new(
        include: Option<&str>,
        exclude: Option<&str>,
        form: NameForm,
    ) -> Result<KernelFilter, String> {
        let compile = |p: Option<&str>| match p.filter(|p| !p.is_empty()) {
            None => Ok(None),
            Some(p) => compile_pattern(p).map(Some),
        };
        Ok(KernelFilter {
            include: compile(include)?,
            exclude: compile(exclude)?,
            form,
        })
    }

    /// Whether this filter selects anything less than every kernel.
    pub fn is_active(&self) -> bool {
        self.include.is_some() || self.exclude.is_some()
    }

    pub fn form(&self) -> NameForm {
        self.form
    }

    pub fn include_src(&self) -> Option<&str> {
        self.include.as_ref().map(Regex::as_str)
    }

    pub fn exclude_src(&self) -> Option<&str> {
        self.exclude.as_ref().map(Regex::as_str)
    }

    /// Whether the kernel whose SDK name is `raw` is selected (formats the name: call once per
    /// kernel symbol, never per dispatch).
    pub fn selects(&self, raw: &str) -> bool {
        if !self.is_active() {
            return true;
        }
        let name = format(raw, self.form);
        self.include.as_ref().is_none_or(|r| r.is_match(&name))
            && !self.exclude.as_ref().is_some_and(|r| r.is_match(&name))
    }
}

/// Compiles an ECMAScript-style pattern as Rust's `regex` (a search, like `std::regex_search`).
/// The constructs ECMAScript allows and `regex` does not (look-ahead and look-behind,
/// backreferences) are refused in one line naming the construct, as is any other error.
pub fn compile_pattern(p: &str) -> Result<Regex, String> {
    if let Err(e) = regex_syntax::ast::parse::Parser::new().parse(p) {
        let what = match e.kind() {
            ErrorKind::UnsupportedLookAround => {
                Some("look-ahead or look-behind ((?=…), (?!…), (?<=…), (?<!…))")
            }
            ErrorKind::UnsupportedBackreference => Some("a backreference (\\1 … \\9)"),
            _ => None,
        };
        if let Some(what) = what {
            return Err(format!(
                "{p:?} uses {what}, which ECMAScript (rocprofv3's std::regex) allows but krphase's regex cannot match; rewrite it without"
            ));
        }
    }
    Regex::new(p).map_err(|e| {
        let msg = e.to_string();
        let last = msg
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        format!(
            "{p:?} is not a valid regex: {}",
            last.trim().trim_start_matches("error: ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_then_exclude_on_the_formatted_name() {
        let f =
            KernelFilter::new(Some("step|touch"), Some("long long>"), NameForm::Demangled).unwrap();
        assert!(f.selects("_Z5touchPym.kd"));
        assert!(!f.selects("_Z4stepIxEvPT_m.kd")); // step<long long>: excluded
        assert!(!f.selects("_ZN3krp5saxpyEPym.kd"));
        let all = KernelFilter::new(None, Some(""), NameForm::Demangled).unwrap();
        assert!(!all.is_active());
        assert!(all.selects("anything"));
    }

    #[test]
    fn refusals_name_the_construct() {
        let e = compile_pattern("saxpy(?!_)").unwrap_err();
        assert!(e.contains("look-ahead"), "{e}");
        let e = compile_pattern("(a)\\1").unwrap_err();
        assert!(e.contains("backreference"), "{e}");
        let e = compile_pattern("(unclosed").unwrap_err();
        assert!(e.contains("not a valid regex") && !e.contains('\n'), "{e}");
    }
}
