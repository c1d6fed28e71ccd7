//! The window model: what a `.krp` file's events mean as replay windows, declines and plain
//! dispatches.
//!
//! The data's path: the tool writes records (`krphase-format` defines them and reads them back);
//! this crate turns the event stream into [`Window`]s, [`Decline`]s, [`PlainDispatch`]es and
//! stray [`CounterReading`]s, in bounded memory; the analyzer imports those.
//!
//! The model types are in `model.rs`. [`Reconstructor`] does the turning (`reconstruct/`: the
//! assembly of drive-mode windows, observe-mode inference, when a held dispatch is complete),
//! with the phases' arithmetic in `phases.rs` and the replay of live allocations behind observe
//! mode's byte estimate in `footprint.rs`; [`limits`] bounds what it holds. [`decode`] runs
//! reader and reconstruction over a whole input held in memory, as an import does (the fuzz
//! targets' entry points).

pub mod decode;
mod footprint;
pub mod limits;
mod model;
mod phases;
pub use phases::{HOST_COPY_BYTES_PER_NS, RESTORE_PLACEMENT_MARGIN_NS, restore_in_pass};
mod reconstruct;

pub use limits::DEFAULT_MAX_PENDING;
pub use model::*;
pub use reconstruct::Reconstructor;
