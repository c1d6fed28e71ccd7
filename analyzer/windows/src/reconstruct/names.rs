//! The string table: kernel and counter names by id, bounded in count and bytes.

use super::Reconstructor;
use crate::limits::{Limit, LimitError};
use krphase_format::event::{Event, NameSpace};

impl Reconstructor {
    /// A NAME record: kernel and counter names are kept; thread names and notes are not needed.
    pub(super) fn take_name(&mut self, ev: &Event) -> Result<(), LimitError> {
        match *ev {
            Event::Name {
                space: NameSpace::Kernel,
                key,
                ref name,
            } => self.add_name(key, name, false),
            Event::Name {
                space: NameSpace::Counter,
                key,
                ref name,
            } => self.add_name(key, name, true),
            _ => Ok(()),
        }
    }

    /// Adds a kernel name, or with `counter` a counter name; both count against the name bounds.
    fn add_name(&mut self, key: u64, name: &str, counter: bool) -> Result<(), LimitError> {
        let held = self.names.len() + self.counter_names.len();
        let map = if counter {
            &self.counter_names
        } else {
            &self.names
        };
        let old = map.get(&key).map_or(0, String::len);
        if old == 0 && !map.contains_key(&key) && held >= self.limits.kernel_names {
            return Err(self.limit(Limit::KernelNames, None));
        }
        let bytes = self.name_bytes - old + name.len();
        if bytes > self.limits.kernel_name_bytes {
            return Err(self.limit(Limit::KernelNameBytes, None));
        }
        self.name_bytes = bytes;
        let map = if counter {
            &mut self.counter_names
        } else {
            &mut self.names
        };
        map.insert(key, name.to_string());
        Ok(())
    }

    /// The name of kernel `k`, when the string table had it.
    pub(super) fn name_of(&self, k: Option<u64>) -> Option<String> {
        k.and_then(|k| self.names.get(&k).cloned())
    }
}
