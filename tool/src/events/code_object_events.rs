//! CODE_OBJECT callbacks: kernel names (for the filter and the string table) and the walk of
//! module-scope variables a code-object change triggers (`modvars.rs`).

use super::tool::Tool;
use crate::recorder::{self, Flush};
use crate::say_once;
use krphase_ffi::Sdk;
use krphase_format::{NameSpace, Record};
use std::sync::atomic::AtomicBool;

/// ROCr's executable-symbol functions are missing or failed (said once).
static NO_HSA_SYMBOLS: AtomicBool = AtomicBool::new(false);

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

    /// Walks the loaded executables' module variables again and records what changed.
    #[cold]
    #[inline(never)]
    pub fn refresh_modvars(&self, agent: u64) {
        let fns = self.sdk.as_ref().and_then(Sdk::hsa_symbols);
        if fns.is_none() && self.sdk.is_some() {
            say_once(
                &NO_HSA_SYMBOLS,
                "ROCr's executable-symbol functions are not in this process; module-scope variables are left out of the byte estimate",
            );
        }
        let (changes, err) = self.modvars.refresh_if_dirty(fns.as_ref(), Some(agent));
        if let Some(e) = err {
            say_once(
                &NO_HSA_SYMBOLS,
                &format!(
                    "walking HSA executable symbols failed ({e}); module-scope variables are left out of the byte estimate"
                ),
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
