//! The replay window's callbacks: CONFIG ENTER (the decision, the callbacks written into the
//! payload, the window's opening records), the pass-count and continue callbacks, PASS
//! ENTER/EXIT (where the layout is confirmed) and CONFIG EXIT.

use super::layout::{ConfirmBy, LayoutState};
use super::tool::Tool;
use crate::config::pass_plan::PassPlan;
use crate::recorder::{self, Flush};
use crate::{clock, say_once};
use krphase_ffi::{
    CounterConfigId, KernelDispatchInfo, ReplayContinueFn, ReplayPassCountFn, ReplayPayload,
};
use krphase_format::Record;
use krphase_format::event::{Decision, own_time};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;

/// Per-thread state of the CONFIG … CONFIG EXIT span running on this thread.
#[derive(Clone, Copy)]
struct WindowTls {
    dispatch: u64,
    passes: u32,
    /// The pass-count callback was written at CONFIG ENTER.
    asked: bool,
    /// The SDK called it (so it found our write: the layout is right).
    called: bool,
    /// The agent's counter configs, one per `KRPHASE_PMC` group, when this window counts.
    configs: Option<&'static [CounterConfigId]>,
    /// Which group each pass counts (the warm-up and verification passes count group 0).
    plan: PassPlan,
    /// The pass running now (our own count of PASS ENTERs), [`NO_PASS`] between passes.
    pass: u32,
}

/// [`WindowTls::pass`] outside a pass.
const NO_PASS: u32 = u32::MAX;

impl WindowTls {
    const NONE: WindowTls = WindowTls {
        dispatch: u64::MAX,
        passes: 0,
        asked: false,
        called: false,
        configs: None,
        plan: PassPlan::NONE,
        pass: NO_PASS,
    };
}

/// For the dispatch counting service: the config of the pass of dispatch `d` running on this
/// thread (the pass plan's group: counted pass k counts group k mod groups, the warm-up and
/// verification passes group 0) and that pass's index; `None` outside a counted pass.
pub fn pass_config(d: u64) -> Option<(CounterConfigId, u32)> {
    WINDOW.with(|w| {
        let st = w.get();
        let configs = st.configs.filter(|c| !c.is_empty())?;
        if st.dispatch != d || st.pass == NO_PASS {
            return None;
        }
        let group = st.plan.group(st.pass).unwrap_or(0);
        Some((configs[group % configs.len()], st.pass))
    })
}

thread_local! {
    /// The replay window running on this thread: (dispatch id, passes seen so far).
    static WINDOW: Cell<WindowTls> = const { Cell::new(WindowTls::NONE) };
}

/// The payload is too small for pass fields (said once).
static SMALL_PAYLOAD: AtomicBool = AtomicBool::new(false);

/// Decisions that write the pass-count callback.
fn drives(decision: Decision) -> bool {
    matches!(
        decision,
        Decision::Replay | Decision::PassesOne | Decision::Indefinite
    )
}

impl Tool {
    /// KERNEL_REPLAY CONFIG ENTER: choose, set the pass-count (and continue) callback, record.
    pub fn on_config_enter(
        &self,
        p: &mut ReplayPayload<'_>,
        tid: u32,
        corr: (u64, u64),
        callbacks: (ReplayPassCountFn, ReplayContinueFn),
        ts: u64,
    ) {
        #[cfg(feature = "test-support")]
        super::panic_injector::panic_if_injected();
        let info = p.dispatch_info();
        let d = info.dispatch_id;
        let layout = self.layout.get();
        let mut decision = self.decide(info.kernel_id, layout);
        if drives(decision) {
            decision = self.write_callbacks(p, decision, layout, callbacks);
        }
        let (agent, queue) = (info.agent_id.handle, info.queue_id.handle);
        let configs = if matches!(decision, Decision::Replay | Decision::Indefinite) {
            self.counter_configs(agent)
        } else {
            None
        };
        WINDOW.with(|w| {
            w.set(WindowTls {
                dispatch: d,
                asked: drives(decision),
                configs,
                plan: self.cfg.plan,
                ..WindowTls::NONE
            })
        });
        // One thread-local access for the window's opening records.
        recorder::with_thread(|th| {
            th.record(
                Record::config_enter(tid, ts, d, info.kernel_id, decision),
                ts,
                Flush::Lazy,
            );
            th.record(
                Record::dispatch_info(tid, d, agent, queue, false),
                ts,
                Flush::Lazy,
            );
            th.record(Record::correlation(tid, d, corr.0, corr.1), ts, Flush::Lazy);
        });
        if matches!(decision, Decision::Replay | Decision::Indefinite) {
            self.record_window_bytes(d, agent, tid, ts);
        }
    }

    /// The counter configs a replay window on `agent` counts with (`KRPHASE_PMC`).
    fn counter_configs(&self, agent: u64) -> Option<&'static [CounterConfigId]> {
        let c = self.counting.get()?;
        c.configs(self.sdk.as_ref()?, agent)
    }

    /// The decision at CONFIG ENTER, before the payload is looked at.
    fn decide(&self, kernel_id: u64, layout: LayoutState) -> Decision {
        if self.panicked() || layout == LayoutState::Stopped {
            Decision::Stopped
        } else if !self.kernel_matches(kernel_id) {
            Decision::FilteredOut
        } else if self.cfg.passes == 1 {
            Decision::PassesOne
        } else if self.cfg.passes == 0 {
            Decision::Indefinite
        } else {
            Decision::Replay
        }
    }

    /// Writes the pass-count and continue callbacks into the slots of the layouts still in
    /// question; returns the decision (Stopped when the payload has no pass fields).
    fn write_callbacks(
        &self,
        p: &mut ReplayPayload<'_>,
        decision: Decision,
        layout: LayoutState,
        (pass_count, cont): (ReplayPassCountFn, ReplayContinueFn),
    ) -> Decision {
        if !p.has_pass_fields() {
            say_once(
                &SMALL_PAYLOAD,
                &format!(
                    "replay payload is only {} bytes; not driving replay",
                    p.size()
                ),
            );
            return Decision::Stopped;
        }
        // The continue callback records every decision of a replaying loop (and ends an
        // indefinite one); a declining PASSES=1 leaves it NULL.
        let cont = if decision == Decision::PassesOne {
            None
        } else {
            cont
        };
        for &l in layout.layouts_to_write() {
            p.set_pass_count(l, pass_count);
            p.set_continue(l, cont);
        }
        decision
    }

    /// The snapshot byte estimate at window start: live allocations and module variables.
    fn record_window_bytes(&self, d: u64, agent: u64, tid: u32, ts: u64) {
        if self.modvars.is_dirty() {
            self.refresh_modvars(agent);
        }
        let e = self.allocs.estimate(agent);
        // Module variables: the attributed ones are in the snapshot; unattributed ones may be.
        let (mv, unattributed) = self.modvars.for_agent(agent);
        let regions = (e.classified_regions + mv.variables).min(u64::from(u16::MAX)) as u16;
        recorder::record(
            Record::window_bytes(
                tid,
                d,
                e.classified + mv.bytes,
                regions,
                e.upper_bound + mv.bytes + unattributed.bytes,
            ),
            ts,
            Flush::Lazy,
        );
    }

    /// The pass-count callback the SDK calls after CONFIG ENTER.
    pub fn on_pass_count(&self, info: &KernelDispatchInfo) -> u64 {
        let ts = clock::now();
        let d = info.dispatch_id;
        WINDOW.with(|w| {
            let mut st = w.get();
            if st.dispatch == d {
                st.called = true;
                w.set(st);
            }
        });
        let n = if self.panicked() {
            1
        } else {
            u64::from(self.cfg.passes)
        };
        // One thread-local access for both records.
        recorder::with_thread(|th| {
            th.record(Record::pass_count_enter(0, ts, d), ts, Flush::Lazy);
            let ts2 = clock::now();
            th.record(Record::pass_count_return(0, ts2, d, n), ts2, Flush::Lazy);
        });
        n
    }

    /// `replay_continue`, called by the SDK after PASS EXIT (never after the last pass of a
    /// fixed loop). A fixed loop always continues; an indefinite one stops once
    /// `KRPHASE_MAX_PASSES` passes have run. One CONTINUE record per call, no allocation.
    ///
    /// Its own time ends after any buffer hand-over: room is made before it is read, so the
    /// record itself never hands over, and a slow hand-over counts in the continue phase, not
    /// in the restore that follows.
    pub fn on_continue(&self, info: &KernelDispatchInfo, current: u64, total: u64) -> bool {
        let ts = clock::now();
        let done = current.saturating_add(1);
        let more = !self.panicked()
            && if total > 0 {
                done < total
            } else {
                done < u64::from(self.cfg.max_passes)
            };
        let total = total.min(u64::from(u32::MAX)) as u32;
        // One thread-local access for both the room and the record.
        recorder::with_thread(|t| {
            t.make_room(ts);
            let own = own_time::encode(clock::now().saturating_sub(ts));
            let r = Record::replay_continue(0, ts, info.dispatch_id, current, more, total, own);
            t.record(r, ts, Flush::Lazy);
        });
        more
    }

    /// PASS ENTER/EXIT. At the first PASS the layout is confirmed by where N sits (an
    /// indefinite loop: at the second PASS, by where the pass index sits).
    pub fn on_pass(&self, p: &ReplayPayload<'_>, enter: bool, tid: u32, ts: u64) {
        let d = p.dispatch_info().dispatch_id;
        let mut layout = self.layout.get();
        // One thread-local access: the passes seen so far in this window, counted up at ENTER.
        let own = WINDOW.with(|w| {
            let mut st = w.get();
            if st.dispatch != d {
                st = WindowTls {
                    dispatch: d,
                    ..WindowTls::NONE
                };
            }
            let seen = st.passes;
            if enter {
                layout = self.confirm_at_pass(p, layout, seen);
                st.passes = seen + 1;
                st.pass = seen;
                w.set(st);
            } else if st.pass != NO_PASS {
                st.pass = NO_PASS;
                w.set(st);
            }
            // Our own count numbers passes when the layout is unusable.
            if enter { seen } else { seen.saturating_sub(1) }
        });
        let (index, total) = match layout {
            LayoutState::Known(l) => (
                p.current_pass(l).unwrap_or(0) as u32,
                p.total_passes(l).unwrap_or(0) as u32,
            ),
            _ => (own, 0),
        };
        let code = layout.record_code();
        let r = if enter {
            Record::pass_enter(tid, ts, d, index, total, code)
        } else {
            Record::pass_exit(tid, ts, d, index, total, code)
        };
        recorder::record(r, ts, Flush::Lazy);
    }

    /// At a PASS ENTER that has `seen` passes before it: the layout after checking it, when it
    /// still needs checking and this PASS can tell.
    fn confirm_at_pass(
        &self,
        p: &ReplayPayload<'_>,
        layout: LayoutState,
        seen: u32,
    ) -> LayoutState {
        if !self.layout.needs_check(layout) {
            layout
        } else if self.cfg.passes > 0 {
            let n = u64::from(self.cfg.passes);
            self.layout.confirm(p, layout, ConfirmBy::TotalPasses, n)
        } else if seen > 0 {
            self.layout
                .confirm(p, layout, ConfirmBy::CurrentPass, u64::from(seen))
        } else {
            layout
        }
    }

    pub fn on_config_exit(&self, d: u64, tid: u32, ts: u64) {
        let st = WINDOW.with(|w| w.replace(WindowTls::NONE));
        let (passes, asked, called) = if st.dispatch == d {
            (st.passes, st.asked, st.called)
        } else {
            (0, false, false)
        };
        if asked && !called {
            // The SDK never called the pass-count callback we wrote: it reads another slot.
            self.layout.stop_uncalled();
        }
        recorder::count(if passes > 0 {
            |c| &*c.windows
        } else {
            |c| &*c.declines
        });
        recorder::record(Record::config_exit(tid, ts, d), ts, Flush::Now);
    }
}
