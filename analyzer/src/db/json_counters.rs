//! Schema version 17: rocprofv3's JSON output (`--output-format json`) attached to the run it
//! proves (`import/rocprofv3_json.rs`): its counter records by dispatch id and `replay_pass`,
//! each counter's dimension instances summed, so that counters collected in more than one pass
//! can be compared pass to pass (`answers/fidelity`); and the tool's notes, which say which pass
//! is a warm-up, a verification, and which group each pass counts.

/// The migration to version 17 (one entry of `MIGRATIONS` in `db/mod.rs`).
pub const MIGRATION: &str = r#"
CREATE TABLE IF NOT EXISTS krphase_json_file (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES krphase_run(id) ON DELETE CASCADE,
    path TEXT NOT NULL, file_hash TEXT NOT NULL,  -- re-import of the same content replaces its rows
    pid INTEGER, host TEXT, "start" BIGINT, "end" BIGINT, -- metadata: the process (SDK clock)
    records INTEGER NOT NULL, matched INTEGER NOT NULL,
    imported_at TEXT NOT NULL,
    UNIQUE (file_hash, run_id)
);
CREATE TABLE IF NOT EXISTS krphase_json_counter (
    json_file_id INTEGER NOT NULL REFERENCES krphase_json_file(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    window_id INTEGER REFERENCES krphase_window(id) ON DELETE SET NULL, -- by dispatch id
    dispatch_id BIGINT NOT NULL,
    pass_index INTEGER,                 -- replay_pass (NULL: a record without one)
    counter TEXT NOT NULL, value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS krphase_json_counter_run ON krphase_json_counter(run_id, window_id);
-- The tool's notes (the string table's note namespace), one a line in key order: the pass plan
-- (`pass_plan v1 ...`: warm-up, verification and each pass's group) and `counters_refused`.
ALTER TABLE krphase_run ADD COLUMN tool_notes TEXT;
"#;
