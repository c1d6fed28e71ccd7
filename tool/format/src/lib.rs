//! The `.krp` phase-file format written by `libkrphase.so` and read by the analyzer: the wire
//! format only.
//!
//! One definition for both sides (measureme/puffin style): [`record`] holds the 32-byte record
//! layout, [`events_block`] how a 4.x EVENTS block sizes records by kind and states threads and
//! dispatch ids once, [`enqueue_pair`] the record that holds an enqueue's ENTER and EXIT, [`event`] the meaning of every record kind, [`block`] the self-framed block container,
//! [`header`] and [`trailer`] the two metadata blocks, [`version`] the format versions and
//! [`clock`] the conversion of TSC ticks to BOOTTIME nanoseconds. [`write::FileWriter`] produces
//! a file and [`read::FileReader`] streams its events back in bounded memory; [`synthetic`] and
//! [`sample`] build events and a small file for tests. What the events mean as replay windows
//! is the next crate on the data's path (`krphase-windows`). `docs/file-format.md` specifies
//! every byte.

pub mod block;
pub mod clock;
pub mod enqueue_pair;
pub mod event;
pub mod events_block;
pub mod header;
pub mod read;
pub mod record;
pub mod sample;
pub mod skipped;
pub mod synthetic;
pub mod trailer;
pub mod version;
pub mod write;

pub use event::{Event, NameSpace};
pub use header::{Header, Mode, Rank};
pub use read::{FileReader, ReadError};
pub use record::{RECORD_SIZE, Record};
pub use skipped::Skipped;
pub use trailer::Trailer;
pub use version::FormatVersion;
pub use write::FileWriter;

/// The four bytes every `.krp` file starts with.
pub const MAGIC: [u8; 4] = *b"KRPH";
/// The format version this crate writes (the `u32` after the magic; see [`version`]). A reader
/// reads every minor of its own major and of the older majors from [`MIN_READ_MAJOR`] on.
pub const FORMAT_VERSION: FormatVersion = FormatVersion::V4_0;
/// The oldest format major this crate reads.
pub const MIN_READ_MAJOR: u16 = 1;
