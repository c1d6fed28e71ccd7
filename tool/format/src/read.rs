//! The streaming reader: one block in memory at a time.
//!
//! A file that ends inside a block (SIGKILL) yields every complete block and then reports
//! [`FileReader::truncated`]. A bad magic, a newer major or an older unsupported one, a record
//! size it cannot read, a checksum mismatch, an unknown required block or a malformed payload is
//! an error naming the file offset. What a newer minor added (optional blocks, record kinds,
//! header bytes, trailer counters, record bytes) is skipped and counted in
//! [`FileReader::skipped`].

use crate::block::{self, FRAME_SIZE, MAX_PAYLOAD, tag};
use crate::clock::{self, Calibration, Pair};
use crate::event::kind;
use crate::event::{Event, NameSpace};
use crate::events_block::Decoder;
use crate::header::Clock;
use crate::header::Header;
use crate::record::{RECORD_SIZE, Record};
use crate::skipped::Skipped;
use crate::trailer::Trailer;
use crate::version::FormatVersion;
use crate::{FORMAT_VERSION, MAGIC, MIN_READ_MAJOR};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// The longest record a newer minor may define that this reader still reads (by its first
/// [`RECORD_SIZE`] bytes).
pub const MAX_RECORD_SIZE: usize = 256;

/// File offset of the header block (after the magic and the version word).
const HEADER_OFFSET: u64 = 8;

/// What went wrong, and where.
#[derive(Debug, thiserror::Error)]
#[error("offset {offset}: {kind}")]
pub struct ReadError {
    pub offset: u64,
    pub kind: ReadErrorKind,
}

impl ReadError {
    fn corrupt(offset: u64, m: String) -> Self {
        ReadError {
            offset,
            kind: ReadErrorKind::Corrupt(m),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReadErrorKind {
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
    #[error("not a krphase file (bad magic)")]
    BadMagic,
    /// No byte at all: the writer never wrote (a run that died before its first flush, or a
    /// path that was only created).
    #[error("empty file (no krphase header; the run wrote nothing)")]
    Empty,
    #[error("written by a newer krphase, format {0}; upgrade krphase")]
    TooNew(FormatVersion),
    #[error("format {0} is older than this reader supports ({MIN_READ_MAJOR}.0)")]
    TooOld(FormatVersion),
    #[error(
        "record size {0} in the header: this reader reads {RECORD_SIZE}-byte records (a newer minor may lengthen them, in steps of 8, up to {MAX_RECORD_SIZE})"
    )]
    RecordSize(u32),
    #[error("file ends before the header is complete")]
    NoHeader,
    #[error("corrupt block: {0}")]
    Corrupt(String),
    #[error("{0}")]
    Clock(String),
}

/// Whether a file of `version` may carry records of `size` bytes: 32 always; longer ones only
/// in a newer minor of a major this reader knows, whose additions it skips.
fn record_size_ok(version: FormatVersion, size: u32) -> bool {
    let size = size as usize;
    if version.major >= 4 {
        // 4.x records carry their own length; 32 is the longest.
        return size == RECORD_SIZE;
    }
    size == RECORD_SIZE
        || (version.minor > newest_minor(version.major)
            && size > RECORD_SIZE
            && size <= MAX_RECORD_SIZE
            && size.is_multiple_of(8))
}

/// The newest minor of `major` this reader knows (every major it reads stops at .0: 1.0, 2.0,
/// and this crate's own).
fn newest_minor(major: u16) -> u16 {
    if major == FORMAT_VERSION.major {
        FORMAT_VERSION.minor
    } else {
        0
    }
}

/// Trailer counters this reader knows.
fn known_trailer_counters() -> u64 {
    crate::trailer::KNOWN_COUNTERS as u64
}

/// Streams the events of one `.krp` file. Host times come out in CLOCK_BOOTTIME ns whatever the
/// file's clock: a TSC-clock file is read twice, first for its CLOCK_PAIR records (the
/// conversion, [`crate::clock`]), then for its events.
pub struct FileReader<R: Read + Seek> {
    src: R,
    offset: u64,
    header: Header,
    version: FormatVersion,
    /// Bytes per record (the header's `record_size`, checked).
    record_size: usize,
    buf: Vec<u8>,
    /// Current EVENTS block: its file offset, and the records still to yield.
    block_at: u64,
    rec_pos: usize,
    rec_len: usize,
    /// The current EVENTS block of a 4.x file, read record by record (its records' sizes vary).
    sized: Option<Decoder>,
    /// Name entries of the current NAMES block, with their file offsets.
    names: VecDeque<(u64, Event)>,
    trailer: Option<Trailer>,
    skipped: Skipped,
    /// File offset of the record or name entry last yielded.
    last_offset: u64,
    truncated: bool,
    done: bool,
    /// The tick conversion of a TSC-clock file.
    calibration: Option<Calibration>,
    /// Why a TSC-clock file's ticks cannot be converted: said at its first record with a host
    /// time (a file cut before any has none to convert, and reads).
    unconvertible: Option<String>,
}

impl FileReader<BufReader<File>> {
    /// Opens a file and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, ReadError> {
        let f = File::open(path.as_ref()).map_err(|e| ReadError {
            offset: 0,
            kind: e.into(),
        })?;
        FileReader::new(BufReader::with_capacity(1 << 16, f))
    }
}

impl<'a> FileReader<io::Cursor<&'a [u8]>> {
    /// Reads a whole file held in memory.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, ReadError> {
        FileReader::new(io::Cursor::new(bytes))
    }
}

enum Fill {
    Complete,
    Eof,
    Partial,
}

fn read_full<R: Read>(src: &mut R, buf: &mut [u8]) -> io::Result<(Fill, usize)> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => return Ok((if n == 0 { Fill::Eof } else { Fill::Partial }, n)),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((Fill::Complete, n))
}

impl<R: Read + Seek> FileReader<R> {
    /// Reads the magic, version and header block (and, for a TSC-clock file, its calibration
    /// pairs).
    pub fn new(mut src: R) -> Result<Self, ReadError> {
        let mut start = [0u8; 8];
        let err = |offset, kind| ReadError { offset, kind };
        match read_full(&mut src, &mut start).map_err(|e| err(0, e.into()))? {
            (Fill::Complete, _) => {}
            (_, 0) => return Err(err(0, ReadErrorKind::Empty)),
            (_, n) if n < 4 || start[..n.min(4)] != MAGIC[..n.min(4)] => {
                return Err(err(0, ReadErrorKind::BadMagic));
            }
            _ => return Err(err(0, ReadErrorKind::NoHeader)),
        }
        if start[..4] != MAGIC {
            return Err(err(0, ReadErrorKind::BadMagic));
        }
        let version =
            FormatVersion::from_word(u32::from_le_bytes(start[4..8].try_into().expect("4")));
        if version.major > FORMAT_VERSION.major {
            return Err(err(4, ReadErrorKind::TooNew(version)));
        }
        if version.major < MIN_READ_MAJOR {
            return Err(err(4, ReadErrorKind::TooOld(version)));
        }
        let mut r = FileReader {
            src,
            offset: HEADER_OFFSET,
            header: Header::default(),
            version,
            record_size: RECORD_SIZE,
            buf: Vec::new(),
            block_at: HEADER_OFFSET,
            rec_pos: 0,
            rec_len: 0,
            sized: None,
            names: VecDeque::new(),
            trailer: None,
            skipped: Skipped::default(),
            last_offset: HEADER_OFFSET,
            truncated: false,
            done: false,
            calibration: None,
            unconvertible: None,
        };
        match r.read_block()? {
            Some(tag::HEADER) => {
                let (header, rest) =
                    Header::decode_counting(&r.buf, version.major).map_err(|m| {
                        err(
                            HEADER_OFFSET,
                            ReadErrorKind::Corrupt(format!("header: {m}")),
                        )
                    })?;
                if !record_size_ok(version, header.record_size) {
                    return Err(err(
                        HEADER_OFFSET,
                        ReadErrorKind::RecordSize(header.record_size),
                    ));
                }
                r.record_size = header.record_size as usize;
                r.skipped.header_bytes = rest as u64;
                r.header = header;
            }
            Some(t) => {
                return Err(err(
                    HEADER_OFFSET,
                    ReadErrorKind::Corrupt(format!("first block has tag {t}, not the header")),
                ));
            }
            None => return Err(err(HEADER_OFFSET, ReadErrorKind::NoHeader)),
        }
        match r.header.clock {
            Clock::Boottime => {}
            Clock::Tsc => r.calibrate()?,
            Clock::Unknown(v) => {
                return Err(err(
                    HEADER_OFFSET,
                    ReadErrorKind::Clock(format!(
                        "header: clock {v} is not one this reader converts; upgrade krphase"
                    )),
                ));
            }
        }
        Ok(r)
    }

    /// Reads every CLOCK_PAIR record of the file, fits the conversion and returns to the first
    /// block. A corrupt or cut block ends the scan (the event pass reports it).
    fn calibrate(&mut self) -> Result<(), ReadError> {
        let start = self.offset;
        let mut pairs: Vec<Pair> = Vec::new();
        while let Ok(Some(t)) = self.read_block() {
            if t != crate::block::tag::EVENTS {
                continue;
            }
            for r in self.block_records() {
                if r.kind != kind::CLOCK_PAIR {
                    continue;
                }
                pairs.push(Pair {
                    tsc: r.payload[0],
                    ns: r.payload[1],
                    width: r.payload[2],
                });
                if pairs.len() >= clock::MAX_PAIRS {
                    thin(&mut pairs);
                }
            }
        }
        self.src
            .seek(SeekFrom::Start(start))
            .map_err(|e| ReadError {
                offset: start,
                kind: e.into(),
            })?;
        self.offset = start;
        self.truncated = false;
        match Calibration::fit(&pairs) {
            Ok(cal) => self.calibration = Some(cal),
            Err(e) => self.unconvertible = Some(e.to_string()),
        }
        Ok(())
    }

    /// The records of the EVENTS block in `self.buf`, up to a malformed one (the event pass
    /// reports it).
    fn block_records(&self) -> Vec<Record> {
        if self.version.major >= 4 {
            let mut d = Decoder::default();
            std::iter::from_fn(|| d.next_record(&self.buf)?.ok().map(|r| r.record)).collect()
        } else if self.buf.len().is_multiple_of(self.record_size) {
            let size = self.record_size;
            let at = |b: &[u8]| Record::decode(b[..RECORD_SIZE].try_into().expect("record"));
            self.buf.chunks_exact(size).map(at).collect()
        } else {
            Vec::new()
        }
    }

    /// The tick conversion of a TSC-clock file (`None` for a BOOTTIME one).
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The format version the file states.
    pub fn version(&self) -> FormatVersion {
        self.version
    }

    /// What this reader skipped so far because a newer minor added it (complete after
    /// iteration).
    pub fn skipped(&self) -> &Skipped {
        &self.skipped
    }

    /// File offset of the record or string-table entry the last [`FileReader::next_event`]
    /// returned (for errors about it found later, e.g. by the window reconstruction).
    pub fn last_offset(&self) -> u64 {
        self.last_offset
    }

    /// True when the file ended inside a block (every complete block was still read).
    /// Meaningful after iteration has finished.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// The trailer, if the file has one (after iteration).
    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// Reads the next complete block into `self.buf`; `None` at a clean end or a partial block.
    fn read_block(&mut self) -> Result<Option<u8>, ReadError> {
        let at = self.offset;
        let mut frame = [0u8; FRAME_SIZE];
        let io_err = |e: io::Error| ReadError {
            offset: at,
            kind: e.into(),
        };
        match read_full(&mut self.src, &mut frame).map_err(io_err)? {
            (Fill::Complete, _) => {}
            (Fill::Eof, _) => return Ok(None),
            (Fill::Partial, _) => {
                self.truncated = true;
                return Ok(None);
            }
        }
        let (t, len, crc) = block::parse_frame(&frame);
        let corrupt = |m: String| ReadError::corrupt(at, m);
        if len > MAX_PAYLOAD {
            return Err(corrupt(format!(
                "block length {len} exceeds the limit {MAX_PAYLOAD}"
            )));
        }
        self.buf.resize(len, 0);
        match read_full(&mut self.src, &mut self.buf).map_err(io_err)? {
            (Fill::Complete, _) => {}
            _ if len == 0 => {}
            _ => {
                self.truncated = true;
                return Ok(None);
            }
        }
        if block::checksum(&frame[..8], &self.buf) != crc {
            return Err(corrupt(format!(
                "checksum mismatch in block with tag {t}, length {len}"
            )));
        }
        self.offset += (FRAME_SIZE + len) as u64;
        Ok(Some(t))
    }

    fn parse_names(&mut self, at: u64) -> Result<(), ReadError> {
        let mut c = block::Cursor::new(&self.buf);
        let corrupt = |m: String| ReadError::corrupt(at, m);
        while c.remaining() > 0 {
            let entry_at = at + (FRAME_SIZE + c.pos) as u64;
            let space = NameSpace::from_u8(c.u8().map_err(corrupt)?);
            let key = c.u64().map_err(corrupt)?;
            let name = c.str().map_err(corrupt)?;
            self.names
                .push_back((entry_at, Event::Name { space, key, name }));
        }
        Ok(())
    }

    fn take_trailer(&mut self, at: u64) -> Result<(), ReadError> {
        let tr = Trailer::decode(&self.buf)
            .map_err(|m| ReadError::corrupt(at, format!("trailer: {m}")))?;
        let count = self
            .buf
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4")));
        self.skipped.trailer_counters += u64::from(count).saturating_sub(known_trailer_counters());
        self.trailer = Some(tr);
        Ok(())
    }

    /// The next event, `None` at the end of the stream.
    pub fn next_event(&mut self) -> Option<Result<Event, ReadError>> {
        loop {
            if let Some(r) = self.next_record() {
                let r = match r {
                    Ok(r) => r,
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                };
                let ev = match self.decode(&r) {
                    Ok(ev) => ev,
                    Err(m) => {
                        self.done = true;
                        return Some(Err(ReadError {
                            offset: self.last_offset,
                            kind: ReadErrorKind::Clock(m),
                        }));
                    }
                };
                if let Event::Unknown { kind, .. } = ev {
                    self.skipped.kind(kind);
                }
                return Some(Ok(ev));
            }
            if let Some((at, n)) = self.names.pop_front() {
                self.last_offset = at;
                return Some(Ok(n));
            }
            if self.done {
                return None;
            }
            match self.next_block() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }

    /// The current EVENTS block's next record (its offset in `last_offset`); `None` when the
    /// block is done.
    fn next_record(&mut self) -> Option<Result<Record, ReadError>> {
        if let Some(d) = self.sized.as_mut() {
            let next = d.next_record(&self.buf);
            let at = |o: usize| self.block_at + (FRAME_SIZE + o) as u64;
            return match next {
                Some(Ok(r)) => {
                    self.last_offset = at(r.at);
                    Some(Ok(r.record))
                }
                Some(Err((o, m))) => Some(Err(ReadError::corrupt(at(o), m))),
                None => {
                    self.sized = None;
                    None
                }
            };
        }
        if self.rec_pos >= self.rec_len {
            return None;
        }
        let o = self.rec_pos * self.record_size;
        let b: &[u8; RECORD_SIZE] = self.buf[o..o + RECORD_SIZE].try_into().expect("record");
        self.last_offset = self.block_at + (FRAME_SIZE + o) as u64;
        self.rec_pos += 1;
        Some(Ok(Record::decode(b)))
    }

    /// A record as an event of the file's version, its host times in BOOTTIME ns; the reason
    /// when its ticks cannot be converted.
    fn decode(&mut self, r: &Record) -> Result<Event, String> {
        if self.version.major < 3 && r.kind >= kind::CLOCK_PAIR {
            // Kinds added in 3.0 are a 2.x newer minor's own kinds in a 2.x file.
            return Ok(Event::Unknown {
                kind: r.kind,
                small8: r.small8,
                small16: r.small16,
                thread: r.thread,
                payload: r.payload,
            });
        }
        let ev = Event::from_record(r);
        match (&mut self.calibration, &self.unconvertible) {
            (Some(c), _) => Ok(c.convert(ev)),
            (None, Some(why)) if ev.host_time().is_some() => Err(why.clone()),
            _ => Ok(ev),
        }
    }

    /// Reads and takes in the next block: `Ok(false)` at the end of the stream.
    fn next_block(&mut self) -> Result<bool, ReadError> {
        self.rec_pos = 0;
        self.rec_len = 0;
        self.sized = None;
        let at = self.offset;
        let Some(t) = self.read_block()? else {
            return Ok(false);
        };
        match t {
            tag::EVENTS if self.version.major >= 4 => {
                self.block_at = at;
                self.sized = Some(Decoder::default());
            }
            tag::EVENTS => {
                let size = self.record_size;
                if !self.buf.len().is_multiple_of(size) {
                    return Err(ReadError::corrupt(
                        at,
                        format!(
                            "events block length {} is not a multiple of {size}",
                            self.buf.len()
                        ),
                    ));
                }
                self.block_at = at;
                self.rec_len = self.buf.len() / size;
                self.skipped.record_bytes += (self.rec_len * (size - RECORD_SIZE)) as u64;
            }
            tag::NAMES => self.parse_names(at)?,
            tag::TRAILER => self.take_trailer(at)?,
            tag::HEADER => return Err(ReadError::corrupt(at, "a second header block".into())),
            t if t >= tag::FIRST_OPTIONAL => self.skipped.block(t, self.buf.len()),
            t => {
                return Err(ReadError::corrupt(
                    at,
                    format!("unknown required block tag {t}"),
                ));
            }
        }
        Ok(true)
    }
}

/// Lets every other pair go (a run long enough to fill [`clock::MAX_PAIRS`]).
fn thin(pairs: &mut Vec<Pair>) {
    let mut i = 0;
    pairs.retain(|_| {
        i += 1;
        i % 2 == 1
    });
}

impl<R: Read + Seek> Iterator for FileReader<R> {
    type Item = Result<Event, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_event()
    }
}
