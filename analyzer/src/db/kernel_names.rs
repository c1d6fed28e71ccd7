//! Kernel names as every output shows them. The database keeps the SDK's raw name (mangled,
//! `.kd` kept, as the tool recorded it); commands that show names format it by rocprofv3's rules
//! (`krphase-names`): demangled with `.kd` stripped by default, `--truncate-kernels` or
//! `--mangled-kernels` otherwise. The form is chosen once per command, before it reads.
//!
//! SQL reads the same formatting through the function `krphase_kernel_name(raw)`, which every
//! connection of the analyzer has (`register`); it is never stored in a view, so other programs
//! can still read the database.

use krphase_names::NameForm;
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

static FORM: AtomicU8 = AtomicU8::new(0);

/// Formatted names by (form, raw name): each symbol is demangled once per process.
static CACHE: Mutex<Option<HashMap<(u8, String), String>>> = Mutex::new(None);

fn code(f: NameForm) -> u8 {
    match f {
        NameForm::Demangled => 0,
        NameForm::Truncated => 1,
        NameForm::Mangled => 2,
    }
}

/// Chooses the form the rest of the command shows.
pub fn set_form(f: NameForm) {
    FORM.store(code(f), Ordering::Relaxed);
}

pub fn form() -> NameForm {
    match FORM.load(Ordering::Relaxed) {
        1 => NameForm::Truncated,
        2 => NameForm::Mangled,
        _ => NameForm::Demangled,
    }
}

/// `raw` in the chosen form (an empty name stays empty).
pub fn shown(raw: &str) -> String {
    let f = form();
    if raw.is_empty() || f == NameForm::Mangled {
        return raw.to_string();
    }
    let key = (code(f), raw.to_string());
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert_with(|| krphase_names::format(raw, f))
        .clone()
}

/// Defines `krphase_kernel_name(raw)` on `conn` (NULL stays NULL).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "krphase_kernel_name",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| Ok(ctx.get::<Option<String>>(0)?.map(|raw| shown(&raw))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_and_rust_format_alike() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let q = |raw: Option<&str>| -> Option<String> {
            conn.query_row("SELECT krphase_kernel_name(?1)", [raw], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(
            q(Some("_Z4stepIxEvPT_m.kd")).as_deref(),
            Some("void step<long long>(long long*, unsigned long)")
        );
        assert_eq!(q(None), None);
        assert_eq!(shown("names_plain.kd"), "names_plain");
        assert_eq!(shown(""), "");
    }
}
