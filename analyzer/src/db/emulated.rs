//! Whether figures come from the emulator: one rule and one wording for every output made from
//! a run. A run is emulated when the command that made its phase file is `krphase-emu`'s (the
//! emulated SDK and device, `docs/emulator.md`), as the tool records it in the file's header; a
//! whole-run measurement when its command runs `krphase-emu`.

use anyhow::Result;
use rusqlite::Connection;

/// The word every output carries for figures from the emulator.
pub const EMULATED: &str = "EMULATED";

/// The sentence a document opens with when its figures come from the emulator.
pub const NOTE: &str = "EMULATED: these numbers come from krphase-emu, an emulated SDK and device, \
                        not from a GPU.";

/// [`command_is_emulated`] of the run aliased `r` (`krphase_run r`), in SQL.
pub const RUN_IS_EMULATED_SQL: &str = "(instr(COALESCE(r.command, ''), 'krphase-emu') > 0)";

/// [`NOTE`] for Markdown, the word in bold.
pub fn markdown_note() -> String {
    format!("**{EMULATED}**{}", &NOTE[EMULATED.len()..])
}

/// True when `command` ran the emulator.
pub fn command_is_emulated(command: &str) -> bool {
    command.contains("krphase-emu")
}

/// True when any of the runs `ids` came from the emulator.
pub fn any_run_emulated(conn: &Connection, ids: &[i64]) -> Result<bool> {
    let mut stmt =
        conn.prepare_cached("SELECT COALESCE(command, '') FROM krphase_run WHERE id = ?1")?;
    for id in ids {
        let command: Option<String> =
            stmt.query_row([id], |r| r.get(0))
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })?;
        if command.is_some_and(|c| command_is_emulated(&c)) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_the_emulator_are_told_apart() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, command, imported_at) VALUES
               (1, 'a', 'h1', '/x/target/release/krphase-emu run stream', 'now'),
               (2, 'b', 'h2', './my_app --size 4', 'now'),
               (3, 'c', 'h3', NULL, 'now');",
        )
        .unwrap();
        assert!(any_run_emulated(&c, &[2, 1]).unwrap());
        assert!(!any_run_emulated(&c, &[2, 3, 9]).unwrap());
    }
}
