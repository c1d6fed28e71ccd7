//! `krphase import`: phase files (.krp) into the database, one transaction per file.

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::Connection;

/// Imports one phase file; returns the run id (the existing one when the same content was
/// imported before). `label` names the run for `--label` selectors.
pub fn import_phase_file(conn: &mut Connection, path: &Path, label: Option<&str>) -> Result<i64> {
    let _ = (conn, label);
    bail!("{}: phase-file import is not available yet", path.display())
}
