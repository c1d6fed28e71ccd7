//! Byte estimates: the snapshot estimate a drive-mode window's WINDOW_BYTES record carries, and
//! the ALLOC, FREE and MODULE_VARS records whose replay (`crate::footprint`) estimates it for
//! windows the tool did not see open.

use super::Reconstructor;
use crate::limits::LimitError;
use crate::model::ByteEstimate;
use krphase_format::event::Event;

impl Reconstructor {
    /// Events that change the live-allocation and module-variable state, and the snapshot
    /// byte estimate recorded at a window's start.
    pub(super) fn take_bytes(&mut self, ev: &Event) -> Result<(), LimitError> {
        let held = match *ev {
            Event::Alloc {
                address,
                size,
                agent,
                class,
                ..
            } => self
                .footprint
                .alloc((address, agent, size, class), &self.limits),
            Event::Free { address, .. } => {
                self.footprint.free(address);
                Ok(())
            }
            Event::ModuleVars {
                agent,
                bytes,
                variables,
                ..
            } => self
                .footprint
                .module_vars(agent, bytes, variables, &self.limits),
            Event::WindowBytes {
                thread,
                dispatch_id,
                classified,
                regions,
                upper_bound,
            } => {
                self.group(dispatch_id, thread).bytes = Some(ByteEstimate {
                    classified,
                    classified_regions: regions,
                    upper_bound,
                });
                Ok(())
            }
            _ => Ok(()),
        };
        held.map_err(|limit| self.limit(limit, None))
    }
}
