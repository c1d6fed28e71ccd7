//! The C boundary, the first step of the data's path: what the SDK calls and what the tool
//! registers with it.
//!
//! `callbacks` holds the `extern "C"` entry points besides tracing (`rocprofiler_configure` is
//! the only exported symbol), `tracing` the tracing callbacks, one per kind, each registered
//! with the tool as its `callback_args`; they read the raw payloads into values for the
//! reactions in `events/`. Every entry point runs inside [`boundary::guard`], so no panic
//! unwinds into C. [`configure`] is registration:
//! the environment read, the SDK's functions and kinds found by name, the mode chosen, tracing
//! set up and, through [`output_file`], the recorder started on the output file. At the other
//! end, [`mod@finalize`] closes the file and says what it holds (`written`), and
//! `process_hooks` adds the atexit safety net and the fork child's own file.

pub mod boundary;
pub(crate) mod callbacks;
pub mod configure;
pub mod finalize;
pub mod output_file;
pub(crate) mod process_hooks;
pub(crate) mod tracing;
mod written;
