//! The `.krp` phase-file format written by `libkrphase.so` and read by the analyzer.
//!
//! One definition for both sides (measureme/puffin style): [`record`] holds the 32-byte record
//! layout, [`event`] the meaning of every record kind, [`block`] the self-framed block container,
//! [`header`] and [`trailer`] the two metadata blocks. [`write::FileWriter`] produces a file,
//! [`read::FileReader`] streams it back in bounded memory, and [`windows::Reconstructor`] turns the
//! event stream into replay windows, declines and plain dispatches. `docs/file-format.md`
//! specifies every byte.

pub mod block;
pub mod clock;
pub mod decode;
pub mod event;
pub mod header;
pub mod limits;
pub mod read;
pub mod record;
pub mod skipped;
pub mod synthetic;
pub mod trailer;
pub mod version;
pub mod windows;
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
pub const FORMAT_VERSION: FormatVersion = FormatVersion::V3_1;
/// The oldest format major this crate reads.
pub const MIN_READ_MAJOR: u16 = 1;
