//! Drive-mode assembly: the tool's CONFIG, PASS and CONTINUE records of a replay window, held
//! with its dispatch, and the window they make once it is complete (its passes with their GPU
//! times and counter values, its phases and outcome). A CONFIG pair without a PASS is emitted at
//! once as a decline, or as an SDK-declined window.
//!
//! The records of one window come from the thread that dispatched it; its completions come from
//! another (`close.rs`).

use super::Reconstructor;
use super::group::{Group, complete_host};
use crate::limits::LimitError;
use crate::model::{
    ContinueCall, Decline, DeclineReason, Interval, Outcome, Output, Pass, Source, Window,
};
use crate::phases;
use krphase_format::event::{Decision, Event};

impl Reconstructor {
    /// CONFIG ENTER, PASS_COUNT_RETURN, PASS ENTER and EXIT, CONTINUE and CONFIG EXIT.
    pub(super) fn take_drive(&mut self, ev: &Event) -> Result<(), LimitError> {
        match *ev {
            Event::ConfigEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
                decision,
            } => self.on_config_enter(thread, ts, dispatch_id, kernel_id, decision)?,
            Event::PassCountReturn {
                thread,
                ts,
                dispatch_id,
                passes,
            } => self.on_pass_count_return(thread, ts, dispatch_id, passes),
            Event::PassEnter {
                thread,
                ts,
                dispatch_id,
                pass,
                ..
            } => self.on_pass_enter(thread, ts, dispatch_id, pass)?,
            Event::PassExit {
                thread,
                ts,
                dispatch_id,
                pass,
                ..
            } => self.on_pass_exit(thread, ts, dispatch_id, pass),
            Event::Continue {
                thread,
                dispatch_id,
                pass,
                result,
                total,
                ts,
                own_time,
            } => {
                let call = self.continue_call(pass, result, total, ts, own_time);
                self.on_continue(thread, dispatch_id, call)?;
            }
            Event::ConfigExit {
                thread,
                ts,
                dispatch_id,
            } => self.on_config_exit(thread, ts, dispatch_id),
            _ => {}
        }
        Ok(())
    }

    fn on_config_enter(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        kernel_id: u64,
        decision: Decision,
    ) -> Result<(), LimitError> {
        self.mark_thread(thread, dispatch_id)?;
        let g = self.group(dispatch_id, thread);
        g.thread = thread;
        g.config_enter = Some(ts);
        g.kernel_id = Some(kernel_id);
        g.decision = Some(decision);
        Ok(())
    }

    fn on_pass_count_return(&mut self, thread: u32, ts: u64, dispatch_id: u64, passes: u64) {
        let g = self.group(dispatch_id, thread);
        g.pass_count_return = Some(ts);
        g.requested = Some(passes);
    }

    fn on_pass_enter(
        &mut self,
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        pass: u32,
    ) -> Result<(), LimitError> {
        let i = pass as usize;
        self.check_per_dispatch(dispatch_id, i)?;
        let g = self.group(dispatch_id, thread);
        while g.passes.len() <= i {
            let index = g.passes.len() as u32;
            g.passes.push(Pass {
                index,
                ..Pass::default()
            });
        }
        g.passes[i].enter = Some(ts);
        g.in_pass = Some(i);
        Ok(())
    }

    fn on_pass_exit(&mut self, thread: u32, ts: u64, dispatch_id: u64, pass: u32) {
        let g = self.group(dispatch_id, thread);
        if let Some(p) = g.passes.get_mut(pass as usize) {
            p.exit = Some(ts);
        }
        g.in_pass = None;
    }

    /// A CONTINUE record as the call it times: entry → entry plus the callback's own time.
    fn continue_call(
        &self,
        pass: u64,
        result: bool,
        total: u32,
        ts: u64,
        own_time: u16,
    ) -> ContinueCall {
        ContinueCall {
            after_pass: pass.min(u64::from(u32::MAX)) as u32,
            total,
            call: Interval {
                start: ts,
                end: ts.saturating_add(self.own_time_ns(own_time)),
            },
            result,
        }
    }

    /// A CONTINUE record's own time in ns, with the meaning of the file's version.
    fn own_time_ns(&self, raw: u16) -> u64 {
        if self.own_time_plain_ns {
            u64::from(raw)
        } else {
            krphase_format::event::own_time::decode(raw)
        }
    }

    fn on_continue(
        &mut self,
        thread: u32,
        dispatch_id: u64,
        call: ContinueCall,
    ) -> Result<(), LimitError> {
        let held = self
            .groups
            .get(&dispatch_id)
            .map_or(0, |g| g.continues.len());
        self.check_per_dispatch(dispatch_id, held)?;
        self.group(dispatch_id, thread).continues.push(call);
        Ok(())
    }

    fn on_config_exit(&mut self, thread: u32, ts: u64, dispatch_id: u64) {
        let g = self.group(dispatch_id, thread);
        g.config_exit = Some(ts);
        g.in_pass = None;
        if !g.passes.is_empty() {
            g.drive_window = true;
            self.try_close(dispatch_id);
        } else {
            self.emit_config_only(dispatch_id);
        }
    }

    /// CONFIG EXIT without a PASS: a tool opt-out or an SDK decline, emitted at once.
    fn emit_config_only(&mut self, d: u64) {
        let Some(g) = self.groups.get(&d) else { return };
        let reason = match (g.decision, g.requested) {
            (Some(Decision::FilteredOut), _) => Some(DeclineReason::OptOut),
            (Some(Decision::Stopped), _) => Some(DeclineReason::Stopped),
            (_, Some(1)) | (Some(Decision::PassesOne), _) => Some(DeclineReason::PassCountOne),
            // N = 0 with the continue callback set: an indefinite loop the SDK declined.
            (Some(Decision::Indefinite), _) => None,
            (_, Some(0)) => Some(DeclineReason::ZeroWithoutContinue),
            (_, None) => Some(DeclineReason::OptOut),
            _ => None,
        };
        let out = match reason {
            Some(reason) => Output::Decline(Decline {
                dispatch_id: d,
                kernel_id: g.kernel_id,
                kernel_name: self.name_of(g.kernel_id),
                thread: g.thread,
                reason,
                config_enter: g.config_enter,
                config_exit: g.config_exit,
            }),
            None => Output::Window(Window {
                requested_passes: g.requested,
                pass_count_return: g.pass_count_return,
                bytes: g.bytes,
                ..self.window_of(d, g, Source::Drive, Outcome::Declined)
            }),
        };
        self.ready.push_back(out);
        // The dispatch still runs once: keep the group for its plain enqueue/completion.
        self.try_close(d);
    }

    /// A drive-mode window from its held passes (also when the file was cut before CONFIG
    /// EXIT): the completions, sorted, give the passes their GPU times in order, the counter
    /// values join their passes, and the phases come from the host times.
    pub(super) fn emit_drive(&mut self, d: u64, mut g: Group) {
        let counters = std::mem::take(&mut g.counters);
        for (p, &(s, e)) in g.passes.iter_mut().zip(g.completes.iter()) {
            p.gpu_start = Some(s);
            p.gpu_end = Some(e);
            p.complete_host = complete_host(&g.complete_hosts, Some(e));
        }
        for p in &mut g.passes {
            p.incomplete = p.enter.is_some() && p.exit.is_none();
        }
        let mut passes = std::mem::take(&mut g.passes);
        self.attach_counters(&mut passes, counters);
        let restores = phases::drive_restores(&passes, &g.continues);
        let pre_pass = phases::pre_pass(g.pass_count_return, &passes);
        let tail = phases::tail(&passes, g.config_exit);
        let stuck = phases::stuck(&passes, g.config_exit);
        let executed = passes.iter().filter(|p| p.exit.is_some()).count() as u64;
        // The SDK broke the loop inside a pass: its outcome line says declined.
        let outcome = if stuck.is_some() {
            Outcome::Declined
        } else {
            Outcome::Replayed
        };
        let base = self.window_of(d, &g, Source::Drive, outcome);
        self.ready.push_back(Output::Window(Window {
            requested_passes: g.requested,
            executed_passes: executed,
            pass_count_return: g.pass_count_return,
            passes,
            restores,
            pre_pass,
            tail,
            bytes: g.bytes,
            continues: g.continues,
            stuck,
            ..base
        }));
    }
}
