//! A panic inside a callback stops at the C boundary: the callback returns, recording stops, the
//! trailer says so, and the caller (the SDK, the application) carries on.

use krphase_ffi::{CallbackPhase, CallbackTracingKind, CallbackTracingRecord, UserData};
use krphase_format::FileReader;

#[test]
fn panic_in_a_callback_stops_recording_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("p.krp");
    krphase::test_support::install_synthetic(&[("KRPHASE_MODE", "drive")], &path).expect("install");
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    let mut payload = [0u64; 32];
    payload[0] = 184;
    payload[5] = 1; // dispatch id
    let call = |payload: &mut [u64; 32], phase| {
        let rec = CallbackTracingRecord {
            context_id: Default::default(),
            thread_id: 5,
            correlation_id: Default::default(),
            kind: CallbackTracingKind(25),
            operation: 1,
            phase,
            payload: payload.as_mut_ptr().cast(),
        };
        let mut ud = UserData::default();
        // SAFETY: a live, 8-aligned 256-byte payload whose size field is 184.
        unsafe { cb(rec, &mut ud, std::ptr::null_mut()) };
    };
    krphase::test_support::inject_panic_at_next_config();
    call(&mut payload, CallbackPhase::ENTER); // panics inside; must return normally
    assert_eq!(
        payload[17], 0,
        "no pass-count callback written after the panic"
    );
    assert_eq!(payload[19], 0);
    call(&mut payload, CallbackPhase::EXIT);
    call(&mut payload, CallbackPhase::ENTER); // later callbacks are harmless no-ops for recording
    call(&mut payload, CallbackPhase::EXIT);
    krphase::finalize(0);
    let mut r = FileReader::open(&path).expect("file");
    let mut n = 0;
    for e in r.by_ref() {
        // The writer's own calibration pairs are not the application's records.
        if !matches!(e.expect("event"), krphase_format::Event::ClockPair { .. }) {
            n += 1;
        }
    }
    assert_eq!(n, 0, "nothing recorded after the panic");
    let t = r.trailer().expect("trailer still written");
    assert_ne!(t.flags & krphase_format::trailer::flags::PANIC, 0);
}
