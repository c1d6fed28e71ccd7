//! Ground truth (`KRPHASE_EMU_TRUTH=PATH`): the emulator's own record of what happened (window,
//! decline and result lines, `docs/emulator.md`), as JSON Lines appended, one `write` per line
//! so concurrent processes appending to one file do not interleave.

use parking_lot::Mutex;
use std::fs::File;
use std::io::Write;
use std::sync::LazyLock;

static FILE: LazyLock<Mutex<Option<File>>> = LazyLock::new(|| Mutex::new(None));

/// Opens the truth file named by `KRPHASE_EMU_TRUTH`, if set. An unusable path is an error.
pub fn init_from_env() -> Result<(), String> {
    let Some(path) = std::env::var_os("KRPHASE_EMU_TRUTH").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| {
            format!(
                "KRPHASE_EMU_TRUTH={}: cannot open for append: {e}",
                path.to_string_lossy()
            )
        })?;
    *FILE.lock() = Some(f);
    Ok(())
}

pub fn enabled() -> bool {
    FILE.lock().is_some()
}

pub fn write(v: &serde_json::Value) {
    let mut g = FILE.lock();
    if let Some(f) = g.as_mut() {
        let mut line = v.to_string();
        line.push('\n');
        if let Err(e) = f.write_all(line.as_bytes()) {
            eprintln!("krphase-emu: writing the truth file failed: {e}");
        }
    }
}
