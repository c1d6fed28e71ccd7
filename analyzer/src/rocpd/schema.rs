//! The rocpd schema versions krphase knows, and the check that a database's views still carry
//! the columns krphase reads (an unknown, newer version is read where they do, and refused with
//! the first missing column where they do not).

use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::{Connection, OpenFlags};

/// `rocpd_metadata.schema_version` values of the released schemas (3.0.0 wrote "3").
pub const KNOWN_VERSIONS: &[&str] = &[
    "3", "3.0.0", "3.0.1", "3.0.2", "3.0.3", "3.0.4", "3.0.5", "4.1.0",
];

/// The version krphase follows when it writes next to rocpd's tables.
pub const FOLLOWED_VERSION: &str = "3.0.3";

/// A view and the columns read from it.
pub type Needs = (&'static str, &'static [&'static str]);

/// What `import-rocpd` reads.
pub const IMPORT_NEEDS: &[Needs] = &[
    ("rocpd_metadata", &["tag", "value"]),
    ("processes", &["guid", "pid", "hostname", "start", "end"]),
    (
        "kernels",
        &[
            "id",
            "guid",
            "pid",
            "dispatch_id",
            "kernel_id",
            "name",
            "agent_abs_index",
            "queue_id",
            "start",
            "end",
        ],
    ),
    (
        "pmc_events",
        &[
            "id",
            "guid",
            "pid",
            "dispatch_id",
            "counter_name",
            "counter_value",
        ],
    ),
];

/// What `export rocpd` joins its views to.
pub const EXPORT_NEEDS: &[Needs] = &[
    ("rocpd_metadata", &["tag", "value"]),
    ("processes", &["guid", "pid", "hostname", "start", "end"]),
    (
        "rocpd_kernel_dispatch",
        &["id", "guid", "dispatch_id", "kernel_id", "start", "end"],
    ),
    ("rocpd_info_kernel_symbol", &["id", "guid", "display_name"]),
];

/// A rocpd database that passed the checks.
pub struct Checked {
    pub version: String,
    /// The version is one krphase knows (else its views matched anyway).
    pub known: bool,
    /// `rocpd_metadata`'s `uuid` row without its leading `_`: rocprofv3 writes the table
    /// suffix there (`_` + the guid with `-` → `_`), other writers the bare value; krphase
    /// suffixes its own tables `_<uuid>` either way.
    pub uuid: Option<String>,
    /// `rocpd_metadata`'s `guid` row.
    pub guid: Option<String>,
}

impl Checked {
    /// A note for an unknown version read through matching views (empty otherwise).
    pub fn note(&self) -> String {
        if self.known {
            String::new()
        } else {
            format!(
                " (rocpd schema {} is newer than the versions krphase knows; its views still match)",
                self.version
            )
        }
    }
}

/// Opens `path` read-only (or read-write, never creating it) and checks it against `needs`.
pub fn open(path: &Path, needs: &[Needs], write: bool) -> Result<(Connection, Checked)> {
    if !path.is_file() {
        bail!("{}: no such file", path.display());
    }
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| anyhow::anyhow!("{}: cannot open ({e})", path.display()))?;
    let checked = check(&conn, path, needs)?;
    Ok((conn, checked))
}

fn metadata(conn: &Connection, tag: &str) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT value FROM rocpd_metadata WHERE tag = ?1 LIMIT 1",
        [tag],
        |r| r.get(0),
    )
    .optional()
}

/// The version, refusing a file that is not SQLite, a database without `rocpd_metadata`, and
/// one whose views lack a column krphase reads.
pub fn check(conn: &Connection, path: &Path, needs: &[Needs]) -> Result<Checked> {
    let objects: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'rocpd_metadata'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| anyhow::anyhow!("{}: not a SQLite database ({e})", path.display()))?;
    if objects == 0 {
        bail!(
            "{}: not a rocpd database (no rocpd_metadata; rocprofv3 writes one with --output-format rocpd)",
            path.display()
        );
    }
    let version = metadata(conn, "schema_version")
        .ok()
        .flatten()
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: rocpd_metadata has no schema_version; not a rocpd database krphase can read",
                path.display()
            )
        })?;
    let known = KNOWN_VERSIONS.contains(&version.as_str());
    if let Some(why) = needs.iter().find_map(|(v, cols)| mismatch(conn, v, cols)) {
        let what = if known {
            format!("rocpd schema {version}")
        } else {
            format!("rocpd schema {version}, unknown to krphase,")
        };
        bail!(
            "{}: {what} does not match what krphase reads: {why}",
            path.display()
        );
    }
    Ok(Checked {
        version,
        known,
        uuid: metadata(conn, "uuid")?.map(|u| bare_uuid(&u).to_string()),
        guid: metadata(conn, "guid")?,
    })
}

/// A metadata uuid without the one leading `_` rocprofv3 gives it.
pub fn bare_uuid(uuid: &str) -> &str {
    uuid.strip_prefix('_').unwrap_or(uuid)
}

/// Why `view` does not serve `cols` (missing, broken, or lacking a column), if it does not.
fn mismatch(conn: &Connection, view: &str, cols: &[&str]) -> Option<String> {
    let st = match conn.prepare(&format!("SELECT * FROM \"{view}\" LIMIT 0")) {
        Ok(st) => st,
        Err(e) => return Some(format!("{view} is missing or unreadable ({e})")),
    };
    let have: Vec<String> = st.column_names().iter().map(|c| c.to_string()).collect();
    cols.iter()
        .find(|c| !have.iter().any(|h| h == *c))
        .map(|c| format!("{view} has no column {c}"))
}
