//! The streaming reader: one block in memory at a time.
//!
//! A file that ends inside a block (SIGKILL) yields every complete block and then reports
//! [`FileReader::truncated`]. A bad magic, an unsupported version, a checksum mismatch, an
//! unknown required block or a malformed payload is an error naming the file offset.

use crate::block::{self, FRAME_SIZE, MAX_PAYLOAD, tag};
use crate::event::{Event, NameSpace};
use crate::header::Header;
use crate::record::{RECORD_SIZE, Record};
use crate::trailer::Trailer;
use crate::{FORMAT_VERSION, MAGIC, MIN_READ_VERSION};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

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
    #[error(
        "format version {0} is newer than this reader supports ({FORMAT_VERSION}); upgrade krphase"
    )]
    TooNew(u32),
    #[error("format version {0} is older than this reader supports ({MIN_READ_VERSION})")]
    TooOld(u32),
    #[error("file ends before the header is complete")]
    NoHeader,
    #[error("corrupt block: {0}")]
    Corrupt(String),
}

/// Streams the events of one `.krp` file.
pub struct FileReader<R: Read> {
    src: R,
    offset: u64,
    header: Header,
    version: u32,
    buf: Vec<u8>,
    /// Current EVENTS block: records still to yield.
    rec_pos: usize,
    rec_len: usize,
    names: VecDeque<Event>,
    trailer: Option<Trailer>,
    truncated: bool,
    done: bool,
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

impl<R: Read> FileReader<R> {
    /// Reads the magic, version and header block.
    pub fn new(mut src: R) -> Result<Self, ReadError> {
        let mut start = [0u8; 8];
        let err = |offset, kind| ReadError { offset, kind };
        match read_full(&mut src, &mut start).map_err(|e| err(0, e.into()))? {
            (Fill::Complete, _) => {}
            (_, n) if n < 4 || start[..n.min(4)] != MAGIC[..n.min(4)] => {
                return Err(err(0, ReadErrorKind::BadMagic));
            }
            _ => return Err(err(0, ReadErrorKind::NoHeader)),
        }
        if start[..4] != MAGIC {
            return Err(err(0, ReadErrorKind::BadMagic));
        }
        let version = u32::from_le_bytes(start[4..8].try_into().expect("4"));
        if version > FORMAT_VERSION {
            return Err(err(4, ReadErrorKind::TooNew(version)));
        }
        if version < MIN_READ_VERSION {
            return Err(err(4, ReadErrorKind::TooOld(version)));
        }
        let mut r = FileReader {
            src,
            offset: 8,
            header: Header::default(),
            version,
            buf: Vec::new(),
            rec_pos: 0,
            rec_len: 0,
            names: VecDeque::new(),
            trailer: None,
            truncated: false,
            done: false,
        };
        match r.read_block()? {
            Some(tag::HEADER) => {
                r.header = Header::decode(&r.buf)
                    .map_err(|m| err(8, ReadErrorKind::Corrupt(format!("header: {m}"))))?;
            }
            Some(t) => {
                return Err(err(
                    8,
                    ReadErrorKind::Corrupt(format!("first block has tag {t}, not the header")),
                ));
            }
            None => return Err(err(8, ReadErrorKind::NoHeader)),
        }
        Ok(r)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn version(&self) -> u32 {
        self.version
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
            let space = NameSpace::from_u8(c.u8().map_err(corrupt)?);
            let key = c.u64().map_err(corrupt)?;
            let name = c.str().map_err(corrupt)?;
            self.names.push_back(Event::Name { space, key, name });
        }
        Ok(())
    }

    /// The next event, `None` at the end of the stream.
    pub fn next_event(&mut self) -> Option<Result<Event, ReadError>> {
        loop {
            if self.rec_pos < self.rec_len {
                let o = self.rec_pos * RECORD_SIZE;
                let b: &[u8; RECORD_SIZE] =
                    self.buf[o..o + RECORD_SIZE].try_into().expect("record");
                self.rec_pos += 1;
                return Some(Ok(Event::from_record(&Record::decode(b))));
            }
            if let Some(n) = self.names.pop_front() {
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

    /// Reads and takes in the next block: `Ok(false)` at the end of the stream.
    fn next_block(&mut self) -> Result<bool, ReadError> {
        self.rec_pos = 0;
        self.rec_len = 0;
        let at = self.offset;
        let Some(t) = self.read_block()? else {
            return Ok(false);
        };
        match t {
            tag::EVENTS => {
                if !self.buf.len().is_multiple_of(RECORD_SIZE) {
                    return Err(ReadError::corrupt(
                        at,
                        format!(
                            "events block length {} is not a multiple of {RECORD_SIZE}",
                            self.buf.len()
                        ),
                    ));
                }
                self.rec_len = self.buf.len() / RECORD_SIZE;
            }
            tag::NAMES => self.parse_names(at)?,
            tag::TRAILER => {
                let tr = Trailer::decode(&self.buf)
                    .map_err(|m| ReadError::corrupt(at, format!("trailer: {m}")))?;
                self.trailer = Some(tr);
            }
            tag::HEADER => return Err(ReadError::corrupt(at, "a second header block".into())),
            t if t >= tag::FIRST_OPTIONAL => {}
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

impl<R: Read> Iterator for FileReader<R> {
    type Item = Result<Event, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_event()
    }
}
