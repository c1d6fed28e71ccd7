//! The one stderr line at finalize: where the phase file went and what it holds (windows,
//! declines, events, dropped records), read back from the trailer just written, so the line
//! states what is on disk.

use krphase_format::Trailer;
use krphase_format::block::{FRAME_SIZE, checksum, parse_frame, tag};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Says once per process what the file at `path` holds; silent when it has no trailer (the
/// writer's failure was reported where it happened).
pub fn say_written(path: &Path) {
    static SAID: AtomicBool = AtomicBool::new(false);
    let Some(t) = read_trailer(path) else { return };
    if SAID.swap(true, Ordering::AcqRel) {
        return;
    }
    crate::say(&line(path, &t));
}

/// The line for trailer `t` of the file at `path`.
fn line(path: &Path, t: &Trailer) -> String {
    format!(
        "wrote {}: {} windows, {} declines, {} events, {} dropped",
        path.display(),
        t.windows,
        t.declines,
        t.events_written,
        t.dropped_dispatch + t.dropped_allocation + t.dropped_window
    )
}

/// The trailer block at the end of a regular file, if its frame and checksum are right (one
/// small read from the page cache the writer just filled).
fn read_trailer(path: &Path) -> Option<Trailer> {
    let len = Trailer::default().encode().len();
    // Opening a FIFO to read blocks until a writer comes, which may be never: stat first, and
    // open without blocking (harmless for a regular file) in case the path changed in between.
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    let n = FRAME_SIZE + len;
    if !meta.is_file() || meta.len() < n as u64 {
        return None;
    }
    f.seek(SeekFrom::End(-(n as i64))).ok()?;
    let mut buf = vec![0u8; n];
    f.read_exact(&mut buf).ok()?;
    let head: [u8; FRAME_SIZE] = buf[..FRAME_SIZE].try_into().ok()?;
    let (kind, plen, crc) = parse_frame(&head);
    let payload = &buf[FRAME_SIZE..];
    (kind == tag::TRAILER && plen == len && checksum(&head[..8], payload) == crc)
        .then(|| Trailer::decode(payload).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trailer_is_read_back_and_named() {
        let dir = std::env::temp_dir().join(format!("krphase-written-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.krp");
        let header = krphase_format::Header::default();
        let mut w = krphase_format::FileWriter::new(Vec::new(), &header).unwrap();
        w.write_records(&[krphase_format::Record::complete(1, 2, 3, 4)])
            .unwrap();
        let t = Trailer {
            windows: 3,
            declines: 1,
            dropped_dispatch: 2,
            ..Trailer::default()
        };
        w.write_trailer(&t).unwrap();
        std::fs::write(&p, w.into_inner()).unwrap();
        let got = read_trailer(&p).expect("trailer");
        assert_eq!(
            line(&p, &got),
            format!(
                "wrote {}: 3 windows, 1 declines, 1 events, 2 dropped",
                p.display()
            )
        );
        // Without a trailer (cut short): nothing to say.
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert!(read_trailer(&p).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
