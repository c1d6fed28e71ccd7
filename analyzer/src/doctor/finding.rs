//! One thing `krphase doctor` found: a trap that would lose the run (no phase file, no replay, a
//! run that dies) or a warning (the run records, but some evidence or setting is lost), each
//! with its fix, printed as one line.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The run would be lost (exit code 1), not only weakened.
    pub loses_run: bool,
    pub problem: String,
    pub fix: String,
}

impl Finding {
    pub fn trap(problem: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            loses_run: true,
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    pub fn warning(problem: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            loses_run: false,
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = if self.loses_run { "TRAP" } else { "warning" };
        write!(f, "{tag}: {} -- fix: {}", self.problem, self.fix)
    }
}
