//! Which kernels drive mode replays: rocprofv3's include/exclude regexes, searched on the kernel
//! name in the form rocprofv3 would show it (`krphase-names`).
//!
//! krphase's own variables win; each one unset falls back to its rocprofv3 twin, so one setting
//! drives both tools: `KRPHASE_KERNEL_FILTER` / `ROCPROF_KERNEL_FILTER_INCLUDE_REGEX`,
//! `KRPHASE_KERNEL_EXCLUDE` / `ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX`, `KRPHASE_TRUNCATE_KERNELS` /
//! `ROCPROF_TRUNCATE_KERNELS`, `KRPHASE_MANGLED_KERNELS` / `ROCPROF_DEMANGLE_KERNELS` (inverted).

use krphase_names::{KernelFilter, NameForm};

/// The filter the environment sets (`None`: every kernel), or the one line naming the variable
/// and what is wrong with its value.
pub fn from_env(set: &dyn Fn(&str) -> Option<String>) -> Result<Option<KernelFilter>, String> {
    let switch = |ours: &str, theirs: &str, invert: bool| -> Result<bool, String> {
        let (name, v, inv) = match (set(ours), set(theirs)) {
            (Some(v), _) => (ours, v, false),
            (None, Some(v)) => (theirs, v, invert),
            (None, None) => return Ok(false),
        };
        let on = match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => return Err(format!("{name}={v:?} is not 0 or 1")),
        };
        Ok(on != inv)
    };
    let form = NameForm::from_switches(
        switch(
            "KRPHASE_TRUNCATE_KERNELS",
            "ROCPROF_TRUNCATE_KERNELS",
            false,
        )?,
        switch("KRPHASE_MANGLED_KERNELS", "ROCPROF_DEMANGLE_KERNELS", true)?,
    );
    let pattern = |ours: &'static str, theirs: &'static str| {
        set(ours)
            .map(|v| (ours, v))
            .or_else(|| set(theirs).map(|v| (theirs, v)))
    };
    let include = pattern(
        "KRPHASE_KERNEL_FILTER",
        "ROCPROF_KERNEL_FILTER_INCLUDE_REGEX",
    );
    let exclude = pattern(
        "KRPHASE_KERNEL_EXCLUDE",
        "ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX",
    );
    for (name, v) in include.iter().chain(&exclude) {
        krphase_names::compile_pattern(v).map_err(|e| format!("{name}: {e}"))?;
    }
    let f = KernelFilter::new(
        include.as_ref().map(|(_, v)| v.as_str()),
        exclude.as_ref().map(|(_, v)| v.as_str()),
        form,
    )?;
    Ok(f.is_active().then_some(f))
}

/// The filter as the file's header and the reports state it: the include pattern, then
/// `; exclude PATTERN` and `; NAMES names` when they differ from the defaults.
pub fn describe(f: Option<&KernelFilter>) -> String {
    let Some(f) = f else {
        return String::new();
    };
    let mut s = f.include_src().unwrap_or_default().to_string();
    if let Some(x) = f.exclude_src() {
        s.push_str(&format!("; exclude {x}"));
    }
    if f.form() != NameForm::Demangled {
        s.push_str(&format!("; {} names", f.form().as_str()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Option<KernelFilter>, String> {
        from_env(&|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn ours_win_and_rocprofv3s_fill_in() {
        assert!(from(&[]).unwrap().is_none());
        let f = from(&[
            ("KRPHASE_KERNEL_FILTER", "^saxpy"),
            ("ROCPROF_KERNEL_FILTER_INCLUDE_REGEX", "^stream"),
            ("ROCPROF_KERNEL_FILTER_EXCLUDE_REGEX", "double\\*, unsigned"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(f.include_src(), Some("^saxpy"));
        assert_eq!(f.exclude_src(), Some("double\\*, unsigned"));
        assert_eq!(describe(Some(&f)), "^saxpy; exclude double\\*, unsigned");
        let f = from(&[
            ("ROCPROF_KERNEL_FILTER_INCLUDE_REGEX", "^step$"),
            ("ROCPROF_TRUNCATE_KERNELS", "1"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(f.form(), NameForm::Truncated);
        assert!(f.selects("_Z4stepIxEvPT_m.kd"));
        let f = from(&[
            ("KRPHASE_KERNEL_FILTER", "\\.kd$"),
            ("ROCPROF_DEMANGLE_KERNELS", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(f.form(), NameForm::Mangled);
        assert_eq!(describe(Some(&f)), "\\.kd$; mangled names");
        // Our switch wins over rocprofv3's.
        let f = from(&[
            ("KRPHASE_KERNEL_FILTER", "x"),
            ("KRPHASE_MANGLED_KERNELS", "0"),
            ("ROCPROF_DEMANGLE_KERNELS", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(f.form(), NameForm::Demangled);
    }

    #[test]
    fn bad_values_name_their_variable_in_one_line() {
        for (k, v, says) in [
            ("KRPHASE_KERNEL_FILTER", "(unclosed", "not a valid regex"),
            (
                "ROCPROF_KERNEL_FILTER_INCLUDE_REGEX",
                "saxpy(?=_)",
                "look-ahead",
            ),
            ("KRPHASE_KERNEL_EXCLUDE", "(a)\\1", "backreference"),
            ("KRPHASE_TRUNCATE_KERNELS", "maybe", "is not 0 or 1"),
        ] {
            let e = from(&[(k, v)]).expect_err(k);
            assert!(e.starts_with(k) && e.contains(says), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
