//! CODE_OBJECT callbacks: kernel names (for the filter and the string table) and the walk of
//! module-scope variables a code-object change triggers (`modvars.rs`), with the one line and
//! NOTICE record that say when the variables are left out and why.

use super::tool::Tool;
use crate::recorder::{self, Flush};
use crate::say;
use krphase_ffi::{HsaSymbolFns, LoaderMissing, WalkUnavailable};
use krphase_format::event::{Notice, module_vars_left_out as why};
use krphase_format::{NameSpace, Record};
use std::sync::atomic::{AtomicBool, Ordering};

/// Module variables were left out (said once, on stderr and as a NOTICE record).
static LEFT_OUT: AtomicBool = AtomicBool::new(false);

/// The NOTICE's `a` (an `hsa_status_t`, 0 for a missing function) and `b` (the reason code).
fn notice_values(u: &WalkUnavailable) -> (u64, u64) {
    match u {
        WalkUnavailable::Loader(LoaderMissing::TableFunction) => (0, why::NO_TABLE_FUNCTION),
        WalkUnavailable::Loader(LoaderMissing::Status(s)) => (u64::from(*s), why::TABLE_STATUS),
        WalkUnavailable::Loader(LoaderMissing::IterateExecutables) => {
            (0, why::NO_ITERATE_EXECUTABLES)
        }
        WalkUnavailable::Functions(_) => (0, why::NO_SYMBOL_FUNCTIONS),
    }
}

/// Says once, on stderr and in the file, that module variables are left out and why.
fn left_out(what: &str, a: u64, b: u64) {
    if !LEFT_OUT.swap(true, Ordering::Relaxed) {
        recorder::notice(Notice::ModuleVarsLeftOut, a, b);
        say(&format!(
            "{what}; module-scope variables are left out of the byte estimate"
        ));
    }
}

impl Tool {
    /// A kernel symbol was registered: remember whether it passes the filter, name it in the
    /// file.
    pub fn on_kernel_symbol(&self, kernel_id: u64, name: &str) {
        self.modvars.mark_dirty();
        self.remember_kernel(kernel_id, name);
        if let Some(r) = recorder::current() {
            r.send_names(vec![(NameSpace::Kernel, kernel_id, name.to_string())]);
        }
    }

    /// ROCr's functions for the walk, asked for now (HSA is initialized by the first dispatch or
    /// code-object event); `None` without an SDK or when they cannot be had (said once).
    fn walk_functions(&self) -> Option<HsaSymbolFns> {
        match self.sdk.as_ref()?.hsa_symbols() {
            Ok(fns) => Some(fns),
            Err(u) => {
                let (a, b) = notice_values(&u);
                left_out(&u.to_string(), a, b);
                None
            }
        }
    }

    /// Walks the loaded executables' module variables again and records what changed.
    #[cold]
    #[inline(never)]
    pub fn refresh_modvars(&self, agent: u64) {
        let fns = self.walk_functions();
        let (changes, err) = self.modvars.refresh_if_dirty(fns.as_ref(), Some(agent));
        if let Some(e) = err {
            left_out(
                &format!("walking HSA executable symbols failed ({e})"),
                u64::from(e.0),
                why::WALK_FAILED,
            );
        }
        let ts = crate::clock::now();
        for c in changes {
            let n = c.bytes.variables.min(u64::from(u16::MAX)) as u16;
            recorder::record(
                Record::module_vars(0, ts, c.agent, c.bytes.bytes, n, c.attribution),
                ts,
                Flush::Now,
            );
        }
    }
}
