//! Opening the output, on the writer thread (an open that blocks, such as a FIFO nobody reads,
//! blocks only the writer): an existing regular file is never truncated or overwritten, a
//! device or FIFO the user names is opened as it is.

use super::with_suffix;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Names tried after the requested one (`run-1.krp` … ) before giving up.
const MAX_SUFFIX: u32 = 999;

/// Opens `path` for writing; returns the file and the path used.
///
/// A FIFO, character or block device or socket at `path` is opened for writing as it is (no
/// create, no truncate). Otherwise the file is created with `O_EXCL`; when a file of that name
/// exists, the next free `-N` suffix is taken instead.
pub fn open_output(path: &Path) -> io::Result<(File, PathBuf)> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create directory {}: {e}", dir.display()),
            )
        })?;
    }
    for n in 0..=MAX_SUFFIX {
        let p = if n == 0 {
            path.to_path_buf()
        } else {
            with_suffix(path, &n.to_string())
        };
        if let Ok(m) = std::fs::metadata(&p) {
            let t = m.file_type();
            if t.is_fifo() || t.is_char_device() || t.is_block_device() || t.is_socket() {
                return OpenOptions::new().write(true).open(&p).map(|f| (f, p));
            }
            continue; // an existing file or directory is never written over
        }
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&p)
        {
            Ok(f) => return Ok((f, p)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} and {MAX_SUFFIX} suffixed names exist", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn existing_files_are_kept_and_suffixes_taken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("sub/run.krp");
        let (mut f, used) = open_output(&p).expect("first");
        assert_eq!(used, p);
        f.write_all(b"first").expect("write");
        let (_, second) = open_output(&p).expect("second");
        assert_eq!(second, dir.path().join("sub/run-1.krp"));
        let (_, third) = open_output(&p).expect("third");
        assert_eq!(third, dir.path().join("sub/run-2.krp"));
        let mut s = String::new();
        File::open(&p)
            .expect("open")
            .read_to_string(&mut s)
            .expect("read");
        assert_eq!(s, "first", "never truncated");
    }

    #[test]
    fn devices_are_opened_as_they_are() {
        let (_, used) = open_output(Path::new("/dev/null")).expect("/dev/null");
        assert_eq!(used, PathBuf::from("/dev/null"));
    }
}
