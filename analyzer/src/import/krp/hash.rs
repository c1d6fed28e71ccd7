//! How a phase file's content is named: the hash that makes an import idempotent, and the older
//! hash earlier databases named their runs by.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// How a phase file's content is named in `krphase_run.file_hash`: `blake3:` and the BLAKE3
/// digest in hex. Databases made before it hold the bare SHA-256 hex of their files; an import
/// looks for those too ([`super::run::already_imported`]), so they keep deduplicating without a
/// rewrite.
const HASH_PREFIX: &str = "blake3:";

/// Streams `path` through `update`.
fn stream(path: &Path, mut update: impl FnMut(&[u8])) -> Result<()> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("{}: read error", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        update(&buf[..n]);
    }
}

/// The content name of a file as new rows store it (BLAKE3: several times SHA-256's speed, so
/// the hash that makes import idempotent costs a few ms even on a 10 M-event file).
pub fn file_hash(path: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    stream(path, |b| {
        h.update(b);
    })?;
    Ok(format!("{HASH_PREFIX}{}", h.finalize().to_hex()))
}

/// The SHA-256 hex of a file, as databases before BLAKE3 named their runs.
pub(super) fn legacy_hash(path: &Path) -> Result<String> {
    let mut h = Sha256::new();
    stream(path, |b| h.update(b))?;
    Ok(format!("{:x}", h.finalize()))
}
