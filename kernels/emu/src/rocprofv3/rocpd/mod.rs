//! `--output-format rocpd`: the counter tool leaves a buffer in the output directory
//! (`BUFFER`), and after the application exits the stand-in turns it into a rocpd SQLite
//! database in the schema of [`schema::VERSION`] ([`writer`]), under the identity rocprofv3
//! gives a run ([`identity`]: UUIDv7 guid, node id from the machine id), and removes the buffer.

pub mod identity;
pub mod schema;
pub mod writer;

use std::path::{Path, PathBuf};

/// The buffer's file name in the output directory.
pub const BUFFER: &str = ".rocprofv3-rocpd-buffer.json";

/// rocprofv3's database name: `<output file>_results.db`, the output file being the pid when
/// `-o` is not given.
pub fn database_path(dir: &Path, name: Option<&str>, pid: u64) -> PathBuf {
    let stem = name.map_or_else(|| pid.to_string(), str::to_string);
    dir.join(format!("{stem}_results.db"))
}

/// Reads the buffer in `dir`, writes the database, removes the buffer; returns the database.
pub fn finish(dir: &Path, name: Option<&str>) -> Result<PathBuf, String> {
    let buffer = dir.join(BUFFER);
    let text = std::fs::read_to_string(&buffer).map_err(|e| {
        format!(
            "the counter tool left no rocpd buffer ({}: {e})",
            buffer.display()
        )
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("the rocpd buffer {} is not JSON: {e}", buffer.display()))?;
    let pid = doc["pid"].as_u64().unwrap_or(0);
    let db = database_path(dir, name, pid);
    writer::write(&doc, &db)?;
    let _ = std::fs::remove_file(&buffer);
    Ok(db)
}
