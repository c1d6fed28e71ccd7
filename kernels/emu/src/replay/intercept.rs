//! The intercepted packet write: a finalizing process forwards packets unchanged; while replay
//! is claimed, a graph launch or a multi-packet write warns once and runs without replay; one
//! eligible packet opens a window.

use super::record::write_decline_truth;
use super::submit::{Launch, submit_once};
use super::window;
use crate::device::{AppCompletion, Queue};
use crate::ids;
use crate::log::{self, Level};
use crate::sdk::sdk;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

static WARN_GRAPH: AtomicBool = AtomicBool::new(false);
static WARN_MULTI: AtomicBool = AtomicBool::new(false);

/// The intercepted write of `launches` to `queue` (one call = one packet batch). `graph` marks a
/// HIP graph launch. Returns when the packets are submitted (after the whole window, if
/// replayed); each launch's completion is returned for the application to track.
pub fn write_packets(queue: &Queue, launches: Vec<Launch>, graph: bool) -> Vec<Arc<AppCompletion>> {
    let s = sdk();
    let apps: Vec<_> = launches.iter().map(|_| queue.app_completion()).collect();
    if s.finalizing() {
        for (l, app) in launches.into_iter().zip(apps.iter().cloned()) {
            submit_once(
                queue,
                l,
                ids::next_dispatch(),
                ids::next_correlation(),
                app,
                false,
            );
        }
        return apps;
    }
    let owner = s.replay_owner();
    let reader = s.replay_claimed();
    if owner.is_some() {
        warn_unsupported(graph, launches.len());
    }
    match owner {
        Some(owner) if launches.len() == 1 && !graph => {
            let l = launches.into_iter().next().expect("one launch");
            let corr = ids::next_correlation();
            window::run(queue, l, corr, apps[0].clone(), owner);
        }
        _ => submit_without_replay(queue, launches, &apps, graph, owner.is_some(), reader),
    }
    apps
}

/// The warn-once lines for a write that replay does not cover.
fn warn_unsupported(graph: bool, packets: usize) {
    if graph {
        log::once(
            &WARN_GRAPH,
            Level::Warning,
            "queue_hooks.cpp",
            188,
            "kernel replay: HIP graph launches are not supported; graph dispatches run once without replay",
        );
    }
    if packets > 1 {
        log::once(
            &WARN_MULTI,
            Level::Warning,
            "queue_hooks.cpp",
            196,
            "kernel replay: only single-packet dispatch submissions are replayed; multi-packet writes run once without replay",
        );
    }
}

/// Each packet of an ineligible write runs once with a fresh dispatch id, under the reader lock
/// (`reader`) while any replay service is configured; while replay is owned, each gets a
/// decline truth line.
fn submit_without_replay(
    queue: &Queue,
    launches: Vec<Launch>,
    apps: &[Arc<AppCompletion>],
    graph: bool,
    replay_owned: bool,
    reader: bool,
) {
    let reason = if graph {
        "graph_launch"
    } else {
        "multi_packet"
    };
    for (l, app) in launches.into_iter().zip(apps.iter().cloned()) {
        let corr = ids::next_correlation();
        let id = ids::next_dispatch();
        if replay_owned {
            write_decline_truth(id, l.kernel_id, reason, None);
        }
        submit_once(queue, l, id, corr, app, reader);
    }
}
