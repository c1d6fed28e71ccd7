//! `KRPHASE_PMC`: the counter groups drive mode collects, one group per pass, and the rule that
//! turns them into a pass count.
//!
//! Syntax: groups separated by `;`, the counters of a group by spaces or commas — each group is
//! what one rocprofv3 `--pmc` option (space-separated names) or one `pmc:` line of its input file
//! holds. `KRPHASE_PMC="SQ_WAVES GRBM_COUNT;SQ_INSTS_VALU"` is two passes: pass 0 counts
//! SQ_WAVES and GRBM_COUNT, pass 1 SQ_INSTS_VALU.
//!
//! Passes: without `KRPHASE_PASSES`, one pass per group (two passes for a single group, since
//! the SDK replays nothing at a pass count of 1). With `KRPHASE_PASSES=N`, N must give every
//! group a pass (N >= groups; `0`, an indefinite loop, needs `KRPHASE_MAX_PASSES` >= groups);
//! pass i counts group i mod groups. Anything else is a contradiction: one line, and the tool
//! runs without counters.

/// Counters one group may hold (the record callback sums them in a fixed-size table).
pub const MAX_GROUP_COUNTERS: usize = 64;

/// The groups of a `KRPHASE_PMC` value, in order; at most `max_groups` (one pass each).
pub fn parse(value: &str, max_groups: u32) -> Result<Vec<Vec<String>>, String> {
    let mut groups = Vec::new();
    for (i, g) in value.split(';').enumerate() {
        let names: Vec<String> = g
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            return Err(format!(
                "KRPHASE_PMC={value:?}: group {} is empty (groups are separated by ';', counters by spaces or commas)",
                i + 1
            ));
        }
        if names.len() > MAX_GROUP_COUNTERS {
            return Err(format!(
                "KRPHASE_PMC={value:?}: group {} has {} counters, at most {MAX_GROUP_COUNTERS}",
                i + 1,
                names.len()
            ));
        }
        groups.push(names);
    }
    if groups.len() > max_groups as usize {
        return Err(format!(
            "KRPHASE_PMC has {} groups, at most {max_groups} (one pass each)",
            groups.len()
        ));
    }
    Ok(groups)
}

/// `KRPHASE_PMC_REFERENCE`'s counters (spaces or commas between them; at least one).
pub fn parse_reference(value: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for n in value.split(|c: char| c.is_whitespace() || c == ',') {
        if !n.is_empty() && !names.iter().any(|m| m == n) {
            names.push(n.to_string());
        }
    }
    if names.is_empty() {
        return Err(format!(
            "KRPHASE_PMC_REFERENCE={value:?} names no counter (counters are separated by spaces or commas)"
        ));
    }
    Ok(names)
}

/// The pass count for `groups` groups, given `KRPHASE_PASSES` (if set), `KRPHASE_MAX_PASSES`
/// and the default pass count; an error when some group would never get a pass.
pub fn passes(
    groups: usize,
    explicit: Option<u32>,
    max_passes: u32,
    default: u32,
) -> Result<u32, String> {
    let g = groups as u32;
    match explicit {
        None if g >= 2 => Ok(g),
        None => Ok(default),
        Some(0) if max_passes >= g => Ok(0),
        Some(0) => Err(format!(
            "KRPHASE_PMC has {g} groups but KRPHASE_PASSES=0 stops after KRPHASE_MAX_PASSES={max_passes} passes, so groups {} to {g} would never be counted",
            max_passes + 1
        )),
        Some(1) => {
            Err("KRPHASE_PMC needs replay passes but KRPHASE_PASSES=1 replays nothing".to_string())
        }
        Some(n) if n >= g => Ok(n),
        Some(n) => Err(format!(
            "KRPHASE_PMC has {g} groups but KRPHASE_PASSES={n}, so groups {} to {g} would never be counted",
            n + 1
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = 4096;

    fn parse(v: &str) -> Result<Vec<Vec<String>>, String> {
        super::parse(v, MAX)
    }

    fn passes(g: usize, n: Option<u32>, m: u32) -> Result<u32, String> {
        super::passes(g, n, m, 2)
    }

    #[test]
    fn groups_split_on_semicolons_counters_on_spaces_and_commas() {
        assert_eq!(
            parse("SQ_WAVES GRBM_COUNT;SQ_INSTS_VALU").unwrap(),
            vec![vec!["SQ_WAVES", "GRBM_COUNT"], vec!["SQ_INSTS_VALU"]]
        );
        assert_eq!(
            parse(" A,B , C ;D").unwrap(),
            vec![vec!["A", "B", "C"], vec!["D"]]
        );
    }

    #[test]
    fn an_empty_group_is_one_line_naming_it() {
        for v in ["A;;B", "A;", ";A", " ", "A; , ;B"] {
            let e = parse(v).expect_err(v);
            assert!(
                e.starts_with("KRPHASE_PMC=") && e.contains("is empty"),
                "{e}"
            );
            assert!(!e.contains('\n'));
        }
        let many = vec!["C"; MAX_GROUP_COUNTERS + 1].join(" ");
        assert!(parse(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn the_pass_rule() {
        assert_eq!(passes(3, None, 2), Ok(3));
        assert_eq!(passes(1, None, 2), Ok(2));
        assert_eq!(passes(2, Some(4), 2), Ok(4));
        assert_eq!(passes(2, Some(2), 2), Ok(2));
        assert_eq!(passes(2, Some(0), 2), Ok(0));
        for (g, n, m) in [(3, Some(2), 2), (3, Some(0), 2), (2, Some(1), 2)] {
            let e = passes(g, n, m).expect_err("contradiction");
            assert!(e.starts_with("KRPHASE_PMC") && !e.contains('\n'), "{e}");
        }
    }
}
