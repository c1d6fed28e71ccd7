//! The tool's pass plan, from its note (`pass_plan v1 …`, kept in `krphase_run.tool_notes`):
//! which pass of a window is the warm-up, which the verification, which counter group each
//! counts, and the reference counters added to every group. Without the note every pass is a
//! counted pass.

use serde::Serialize;

/// What one pass index of a window is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// `KRPHASE_WARMUP_PASS`: an extra first pass whose counters are not combined.
    Warmup,
    Counted,
    /// `KRPHASE_VERIFY_PASS`: an extra last pass repeating group 0.
    Verify,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Warmup => "warm-up",
            Role::Counted => "counted",
            Role::Verify => "verification",
        }
    }
}

/// The pass plan of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PassPlan {
    pub warmup: bool,
    pub verify: bool,
    pub reference: Vec<String>,
    pub groups: Vec<Vec<String>>,
    /// One per pass index: its role and the group it counts.
    pub roles: Vec<(Role, Option<usize>)>,
    /// The line the tool said when it stopped counting for the run (`counters_refused`).
    pub refused: Option<String>,
}

impl PassPlan {
    /// The role of pass `pass` (a pass past the plan's roles is a counted one).
    pub fn role(&self, pass: i64) -> Role {
        usize::try_from(pass)
            .ok()
            .and_then(|p| self.roles.get(p))
            .map_or(Role::Counted, |r| r.0)
    }

    /// Whether the plan asked for anything that costs or adds to a window.
    pub fn has_options(&self) -> bool {
        self.warmup || self.verify || !self.reference.is_empty()
    }
}

/// The plan in the tool's notes (one a line), `None` without a `pass_plan` note; `Err` is the
/// one line saying why a plan note could not be read.
pub fn parse(notes: &str) -> Result<Option<PassPlan>, String> {
    let mut plan: Option<PassPlan> = None;
    let mut refused = None;
    for line in notes.lines() {
        if let Some(rest) = line.strip_prefix("pass_plan v1 ") {
            plan = Some(parse_plan(rest)?);
        } else if let Some(rest) = line.strip_prefix("counters_refused v1 ") {
            refused = Some(rest.strip_prefix("reason=").unwrap_or(rest).to_string());
        }
    }
    Ok(plan.map(|mut p| {
        p.refused = refused;
        p
    }))
}

fn parse_plan(rest: &str) -> Result<PassPlan, String> {
    let mut p = PassPlan::default();
    for field in rest.split(' ').filter(|f| !f.is_empty()) {
        let Some((k, v)) = field.split_once('=') else {
            continue;
        };
        match k {
            "warmup" => p.warmup = v == "1",
            "verify" => p.verify = v == "1",
            "reference" => p.reference = list(v, ','),
            "groups" if v != "-" => {
                p.groups = v.split(';').map(|g| list(g, '+')).collect();
            }
            "roles" => {
                p.roles = v
                    .split(',')
                    .map(role)
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("the tool's pass plan has {e}"))?;
            }
            _ => {}
        }
    }
    Ok(p)
}

fn list(v: &str, sep: char) -> Vec<String> {
    v.split(sep)
        .filter(|s| !s.is_empty() && *s != "-")
        .map(str::to_string)
        .collect()
}

fn role(r: &str) -> Result<(Role, Option<usize>), String> {
    let mut chars = r.chars();
    let kind = match chars.next() {
        Some('w') => Role::Warmup,
        Some('c') => Role::Counted,
        Some('v') => Role::Verify,
        _ => return Err(format!("an unknown pass role {r:?}")),
    };
    let group = match chars.as_str() {
        "-" | "" => None,
        g => Some(
            g.parse()
                .map_err(|_| format!("an unknown pass role {r:?}"))?,
        ),
    };
    Ok((kind, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_plan_note_reads_back() {
        let notes = "pass_plan v1 passes=4 max_passes=2 warmup=1 verify=1 \
            reference=GRBM_GUI_ACTIVE,TCC_HIT groups=SQ_WAVES+GRBM_GUI_ACTIVE;SQ_INSTS_VALU+TCC_HIT \
            roles=w0,c0,c1,v0\ncounters_refused v1 reason=too many GRBM counters";
        let p = parse(notes).unwrap().unwrap();
        assert!(p.warmup && p.verify);
        assert_eq!(p.reference, ["GRBM_GUI_ACTIVE", "TCC_HIT"]);
        assert_eq!(p.groups.len(), 2);
        assert_eq!(p.role(0), Role::Warmup);
        assert_eq!(p.role(3), Role::Verify);
        assert_eq!(p.role(9), Role::Counted);
        assert_eq!(p.refused.as_deref(), Some("too many GRBM counters"));
        assert_eq!(parse("other note").unwrap(), None);
        assert!(parse("pass_plan v1 roles=x1").is_err());
        let bare = parse("pass_plan v1 passes=2 groups=- roles=c-,c-")
            .unwrap()
            .unwrap();
        assert!(!bare.has_options() && bare.groups.is_empty());
    }
}
