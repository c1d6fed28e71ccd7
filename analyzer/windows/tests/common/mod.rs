//! Reconstruction of a whole event stream, shared by the window tests.
#![allow(dead_code)]

use krphase_format::Event;
use krphase_windows::{Output, Reconstructor};

/// Pushes everything; returns what came out before `finish` and after it.
pub fn reconstruct(evs: &[Event]) -> (Vec<Output>, Vec<Output>) {
    reconstruct_as(krphase_format::FORMAT_VERSION, evs)
}

/// As [`reconstruct`], with the meaning of format `version`.
pub fn reconstruct_as(
    version: krphase_format::FormatVersion,
    evs: &[Event],
) -> (Vec<Output>, Vec<Output>) {
    let mut rc = Reconstructor::for_version(version);
    let mut before = Vec::new();
    for e in evs {
        rc.push(e).expect("within the limits");
        while let Some(o) = rc.pop() {
            before.push(o);
        }
    }
    rc.finish();
    let mut after = Vec::new();
    while let Some(o) = rc.pop() {
        after.push(o);
    }
    (before, after)
}
