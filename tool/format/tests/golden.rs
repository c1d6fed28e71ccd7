//! Golden files pin the format: `tests/golden/small.krp` is what the deterministic test writer
//! produces, `small.json` is its decoding. Regenerate with `KRPHASE_BLESS=1` after an intended
//! format change (and bump FORMAT_VERSION).

mod common;

use krphase_format::FileReader;
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn decode_to_json(path: &std::path::Path) -> serde_json::Value {
    let mut r = FileReader::open(path).expect("open golden");
    let events: Vec<_> = r.by_ref().map(|e| e.expect("golden decodes")).collect();
    let (mut outputs, after) = common::reconstruct(&events);
    outputs.extend(after);
    serde_json::json!({
        "version": r.version(),
        "header": r.header(),
        "events": events,
        "trailer": r.trailer(),
        "truncated": r.truncated(),
        "outputs": outputs,
    })
}

#[test]
fn writer_reproduces_golden_bytes_and_reader_decodes_golden_json() {
    let dir = golden_dir();
    let krp = dir.join("small.krp");
    let json = dir.join("small.json");
    let bytes = common::write_file();
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::create_dir_all(&dir).expect("golden dir");
        std::fs::write(&krp, &bytes).expect("write golden krp");
        let v = decode_to_json(&krp);
        std::fs::write(
            &json,
            serde_json::to_string_pretty(&v).expect("json") + "\n",
        )
        .expect("write golden json");
    }
    let golden = std::fs::read(&krp).expect("golden small.krp (bless with KRPHASE_BLESS=1)");
    assert_eq!(
        bytes, golden,
        "the writer's bytes changed: a format change needs a version bump"
    );
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("golden json")).expect("parse");
    assert_eq!(decode_to_json(&krp), want);
}
