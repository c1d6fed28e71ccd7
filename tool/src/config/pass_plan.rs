//! The pass plan of drive mode: which pass of a window is the warm-up (`KRPHASE_WARMUP_PASS`),
//! which the verification (`KRPHASE_VERIFY_PASS`), and which counter group each pass counts.
//! The plan is written once into the `.krp` as a note (`note` below), so a reader can tell the
//! passes apart without a format change.
//!
//! Layout of a window's passes: `[warm-up] counted… [verification]`. The counted passes are
//! the `base` passes of `KRPHASE_PMC`/`KRPHASE_PASSES` (for an indefinite loop,
//! `KRPHASE_MAX_PASSES`'s), counted pass k counting group k mod groups; the warm-up and the
//! verification pass both count group 0, so the warm-up's values show what it changed and the
//! verification repeats group 0 exactly.

use super::pmc;

/// Drive mode's counters and passes, from `KRPHASE_PMC`, `KRPHASE_PMC_REFERENCE`,
/// `KRPHASE_WARMUP_PASS`, `KRPHASE_VERIFY_PASS` and the pass counts.
#[derive(Debug, Clone)]
pub struct Counted {
    /// The groups, the reference counters appended to each, when valid.
    pub groups: Option<Vec<Vec<String>>>,
    /// `KRPHASE_PMC_REFERENCE`'s counters (empty: none).
    pub reference: Vec<String>,
    /// Why the counters were set aside (the tool runs without them).
    pub warning: Option<String>,
    /// What the pass-count callback returns (the extras included; 0: indefinite).
    pub passes: u32,
    /// An indefinite loop's passes (the extras included).
    pub max_passes: u32,
    pub plan: PassPlan,
}

/// Counter groups, each a list of counter names.
type Groups = Vec<Vec<String>>;

/// A 0/1 switch; anything else is one line naming the variable.
fn switch(set: &dyn Fn(&str) -> Option<String>, k: &str) -> Result<bool, String> {
    match set(k) {
        None => Ok(false),
        Some(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("{k}={v:?} is not 0 or 1")),
        },
    }
}

/// The groups with the reference counters added to each (once: a group that already counts
/// one keeps it where it is); without `KRPHASE_PMC` the references are the one group.
fn groups_with_reference(
    set: &dyn Fn(&str) -> Option<String>,
    max_groups: u32,
) -> Result<Option<(Groups, Vec<String>)>, String> {
    let reference = match set("KRPHASE_PMC_REFERENCE") {
        None => Vec::new(),
        Some(v) => pmc::parse_reference(&v)?,
    };
    let mut groups = match set("KRPHASE_PMC") {
        None if reference.is_empty() => return Ok(None),
        None => vec![Vec::new()],
        Some(v) => pmc::parse(&v, max_groups)?,
    };
    for (i, g) in groups.iter_mut().enumerate() {
        for r in &reference {
            if !g.contains(r) {
                g.push(r.clone());
            }
        }
        if g.len() > pmc::MAX_GROUP_COUNTERS {
            return Err(format!(
                "KRPHASE_PMC_REFERENCE makes group {} {} counters, at most {}",
                i + 1,
                g.len(),
                pmc::MAX_GROUP_COUNTERS
            ));
        }
    }
    Ok(Some((groups, reference)))
}

/// Resolves the counters and passes. `Err` only for a bad warm-up or verification switch; a
/// bad counter list costs the counters (`warning`), never the phases.
pub fn resolve(
    set: &dyn Fn(&str) -> Option<String>,
    explicit_passes: Option<u32>,
    max_passes: u32,
    (max_groups, default_passes): (u32, u32),
) -> Result<Counted, String> {
    let warmup = switch(set, "KRPHASE_WARMUP_PASS")?;
    let verify = switch(set, "KRPHASE_VERIFY_PASS")?;
    let counted = groups_with_reference(set, max_groups).and_then(|o| {
        o.map(|(g, r)| {
            pmc::passes(g.len(), explicit_passes, max_passes, default_passes).map(|n| (g, r, n))
        })
        .transpose()
    });
    let plain = explicit_passes.unwrap_or(default_passes);
    let (groups, reference, warning, base) = match counted {
        Ok(Some((g, r, n))) => (Some(g), r, None, n),
        Ok(None) => (None, Vec::new(), None, plain),
        Err(e) => (
            None,
            Vec::new(),
            Some(format!("{e}; running without counters")),
            plain,
        ),
    };
    // A pass count of 1 replays nothing, so there is no pass to add.
    let plan = PassPlan {
        warmup: warmup && base != 1,
        verify: verify && base != 1,
        base: if base == 0 { max_passes } else { base },
        groups: groups.as_ref().map_or(0, Vec::len),
    };
    let extras = plan.extras();
    Ok(Counted {
        groups,
        reference,
        warning,
        passes: if base == 0 { 0 } else { base + extras },
        max_passes: if base == 0 {
            max_passes + extras
        } else {
            max_passes
        },
        plan,
    })
}

/// What one pass is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The extra first pass, run so every counted pass starts warm; its counters are written but
    /// belong to no stitched metric.
    Warmup,
    /// One of the passes the groups are counted in.
    Counted,
    /// The extra last pass, repeating group 0.
    Verify,
}

impl Role {
    fn letter(self) -> char {
        match self {
            Role::Warmup => 'w',
            Role::Counted => 'c',
            Role::Verify => 'v',
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PassPlan {
    pub warmup: bool,
    pub verify: bool,
    /// Counted passes (an indefinite loop's: its `KRPHASE_MAX_PASSES` before the extras).
    pub base: u32,
    /// Counter groups (0: no counters).
    pub groups: usize,
}

impl PassPlan {
    /// No options, no counters.
    pub const NONE: PassPlan = PassPlan {
        warmup: false,
        verify: false,
        base: 0,
        groups: 0,
    };

    /// Passes the options add to the base.
    pub fn extras(&self) -> u32 {
        u32::from(self.warmup) + u32::from(self.verify)
    }

    /// What pass `pass` (0-based) is for.
    pub fn role(&self, pass: u32) -> Role {
        if self.warmup && pass == 0 {
            return Role::Warmup;
        }
        let k = pass - u32::from(self.warmup);
        if self.verify && k == self.base {
            Role::Verify
        } else {
            Role::Counted
        }
    }

    /// The group pass `pass` counts; `None` without counters.
    pub fn group(&self, pass: u32) -> Option<usize> {
        if self.groups == 0 {
            return None;
        }
        Some(match self.role(pass) {
            Role::Warmup | Role::Verify => 0,
            Role::Counted => (pass - u32::from(self.warmup)) as usize % self.groups,
        })
    }

    /// The plan as one line of `key=value` fields (the `.krp` note; docs/tool.md describes it):
    /// `passes` as returned to the SDK (0: indefinite), `max_passes`, the two options, the
    /// reference counters, the groups (`;` between groups, `+` between counters, `-` for none)
    /// and one role per pass the loop can run (`w`/`c`/`v` and the group, or `-`).
    pub fn note(
        &self,
        passes: u32,
        max_passes: u32,
        reference: &[String],
        groups: &[Vec<String>],
    ) -> String {
        let total = if passes == 0 { max_passes } else { passes };
        let roles: Vec<String> = (0..total)
            .map(|p| {
                let g = self.group(p).map_or("-".to_string(), |g| g.to_string());
                format!("{}{g}", self.role(p).letter())
            })
            .collect();
        let groups = if groups.is_empty() {
            "-".to_string()
        } else {
            groups
                .iter()
                .map(|g| g.join("+"))
                .collect::<Vec<_>>()
                .join(";")
        };
        let reference = if reference.is_empty() {
            "-".to_string()
        } else {
            reference.join(",")
        };
        format!(
            "pass_plan v1 passes={passes} max_passes={max_passes} warmup={} verify={} reference={reference} groups={groups} roles={}",
            u8::from(self.warmup),
            u8::from(self.verify),
            roles.join(",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve_vars(vars: &[(&str, &str)]) -> Result<Counted, String> {
        let get = |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        let explicit = get("KRPHASE_PASSES").map(|v| v.parse().unwrap());
        super::resolve(&get, explicit, 2, (4096, 2))
    }

    #[test]
    fn references_join_every_group_and_the_extras_add_passes() {
        let c = resolve_vars(&[
            ("KRPHASE_PMC", "SQ_WAVES;SQ_INSTS_VALU TCC_HIT"),
            ("KRPHASE_PMC_REFERENCE", "TCC_HIT,GRBM_GUI_ACTIVE"),
            ("KRPHASE_WARMUP_PASS", "1"),
            ("KRPHASE_VERIFY_PASS", "1"),
        ])
        .unwrap();
        assert_eq!(
            c.groups.unwrap(),
            vec![
                vec!["SQ_WAVES", "TCC_HIT", "GRBM_GUI_ACTIVE"],
                vec!["SQ_INSTS_VALU", "TCC_HIT", "GRBM_GUI_ACTIVE"],
            ]
        );
        assert_eq!((c.passes, c.plan.base, c.plan.groups), (4, 2, 2));
        let only = resolve_vars(&[("KRPHASE_PMC_REFERENCE", "TCC_HIT")]).unwrap();
        assert_eq!(only.groups.unwrap(), vec![vec!["TCC_HIT"]]);
        assert_eq!(only.passes, 2, "every pass counts the references");
        let bare = resolve_vars(&[("KRPHASE_VERIFY_PASS", "1")]).unwrap();
        assert_eq!((bare.passes, bare.plan.groups), (3, 0));
        let loop_ = resolve_vars(&[("KRPHASE_PASSES", "0"), ("KRPHASE_WARMUP_PASS", "1")]).unwrap();
        assert_eq!((loop_.passes, loop_.max_passes, loop_.plan.base), (0, 3, 2));
        let one = resolve_vars(&[("KRPHASE_PASSES", "1"), ("KRPHASE_WARMUP_PASS", "1")]).unwrap();
        assert_eq!(
            (one.passes, one.plan.extras()),
            (1, 0),
            "nothing to add to no replay"
        );
    }

    #[test]
    fn bad_values_are_one_line() {
        for k in ["KRPHASE_WARMUP_PASS", "KRPHASE_VERIFY_PASS"] {
            let e = resolve_vars(&[(k, "2")]).unwrap_err();
            assert_eq!(e, format!("{k}=\"2\" is not 0 or 1"));
        }
        let c = resolve_vars(&[
            ("KRPHASE_PMC", "SQ_WAVES"),
            ("KRPHASE_PMC_REFERENCE", " , "),
        ])
        .unwrap();
        let w = c.warning.unwrap();
        assert!(
            w.starts_with("KRPHASE_PMC_REFERENCE=") && !w.contains('\n'),
            "{w}"
        );
        assert!(c.groups.is_none() && c.reference.is_empty());
        let many = vec!["C"; pmc::MAX_GROUP_COUNTERS].join(" ");
        let c = resolve_vars(&[("KRPHASE_PMC", &many), ("KRPHASE_PMC_REFERENCE", "R")]).unwrap();
        assert!(c.warning.unwrap().contains("at most"));
    }

    #[test]
    fn warmup_first_verification_last_groups_between() {
        let p = PassPlan {
            warmup: true,
            verify: true,
            base: 3,
            groups: 2,
        };
        let roles: Vec<(Role, Option<usize>)> = (0..5).map(|i| (p.role(i), p.group(i))).collect();
        assert_eq!(
            roles,
            vec![
                (Role::Warmup, Some(0)),
                (Role::Counted, Some(0)),
                (Role::Counted, Some(1)),
                (Role::Counted, Some(0)),
                (Role::Verify, Some(0)),
            ]
        );
        let plain = PassPlan {
            base: 2,
            groups: 2,
            ..PassPlan::default()
        };
        assert_eq!((plain.group(0), plain.group(1)), (Some(0), Some(1)));
        assert_eq!(plain.extras(), 0);
        let bare = PassPlan {
            verify: true,
            base: 2,
            ..PassPlan::default()
        };
        assert_eq!((bare.role(2), bare.group(2)), (Role::Verify, None));
    }

    #[test]
    fn the_note_lists_groups_references_and_every_pass() {
        let p = PassPlan {
            warmup: true,
            verify: true,
            base: 2,
            groups: 2,
        };
        let groups = vec![
            vec!["SQ_WAVES".to_string(), "TCC_HIT".to_string()],
            vec!["SQ_INSTS_VALU".to_string(), "TCC_HIT".to_string()],
        ];
        assert_eq!(
            p.note(4, 2, &["TCC_HIT".to_string()], &groups),
            "pass_plan v1 passes=4 max_passes=2 warmup=1 verify=1 reference=TCC_HIT \
             groups=SQ_WAVES+TCC_HIT;SQ_INSTS_VALU+TCC_HIT roles=w0,c0,c1,v0"
        );
        let bare = PassPlan {
            verify: true,
            base: 3,
            ..PassPlan::default()
        };
        assert_eq!(
            bare.note(0, 4, &[], &[]),
            "pass_plan v1 passes=0 max_passes=4 warmup=0 verify=1 reference=- groups=- roles=c-,c-,c-,v-"
        );
    }
}
