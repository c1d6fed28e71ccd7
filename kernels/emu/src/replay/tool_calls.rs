//! The replay owner's callbacks as a window makes them: CONFIG ENTER with the pass-count call,
//! PASS ENTER and EXIT, the continue decision, and CONFIG EXIT. Each carries the window's
//! thread and correlation id; the caller takes the clock readings around them.

use super::payload::{
    PayloadFields, PayloadStore, build_payload, in_pass_enter, payload_ptr, read_callbacks,
};
use super::record::WindowRecord;
use crate::clock::now_ns;
use crate::kinds::{self, replay_op};
use crate::opts::LayoutOpt;
use crate::sdk::{CallbackEvent, Subscriber};
use crate::tool_time::{Call, timed};
use krphase_ffi::{CallbackPhase, KernelDispatchInfo, ReplayContinueFn, UserData};

/// The replay owner as one window sees it: its CONFIG and PASS subscriptions, the value it
/// stored at CONFIG ENTER, and the `replay_continue` it wrote there.
pub(super) struct ReplayTool {
    pub(super) owner: Subscriber,
    /// The owner's PASS subscription, if it covers PASS.
    pub(super) pass: Option<Subscriber>,
    pub(super) config_ud: UserData,
    pub(super) cont: ReplayContinueFn,
    /// The CONFIG payload as the tool left it at CONFIG ENTER: CONFIG EXIT gets this copy, so
    /// the callbacks it wrote there (and any other bytes) are still in place.
    pub(super) config_payload: Box<PayloadStore>,
}

fn invoke(
    sub: &Subscriber,
    w: &WindowRecord,
    op: i32,
    phase: CallbackPhase,
    p: &mut PayloadStore,
    ud: &mut UserData,
) {
    sub.invoke(
        CallbackEvent {
            thread_id: w.thread,
            corr: w.corr,
            kind: kinds::table().kernel_replay,
            op,
            phase,
        },
        payload_ptr(p),
        ud,
    );
}

/// What the tool answered at CONFIG ENTER: its user data, the pass count (`None`: no
/// `replay_pass_count` callback) and its `replay_continue`.
pub(super) struct ConfigAnswer {
    pub(super) user_data: UserData,
    pub(super) passes: Option<u64>,
    pub(super) cont: ReplayContinueFn,
    /// The payload after CONFIG ENTER, for CONFIG EXIT.
    pub(super) payload: Box<PayloadStore>,
}

/// CONFIG ENTER, then the pass-count call with the value stored at ENTER. Stamps
/// `config_enter` just before the callback and `pass_count_return` after the call.
pub(super) fn config_enter(
    owner: &Subscriber,
    w: &mut WindowRecord,
    layout: LayoutOpt,
    info: KernelDispatchInfo,
) -> ConfigAnswer {
    let mut user_data = UserData::default();
    let mut payload = build_payload(layout, info, PayloadFields::config());
    w.config_enter = now_ns();
    invoke(
        owner,
        w,
        replay_op::CONFIG,
        CallbackPhase::ENTER,
        &mut payload,
        &mut user_data,
    );
    let (pass_count, cont) = read_callbacks(layout, &mut payload);
    // SAFETY: the tool stored this callback with the header's signature.
    let passes = pass_count.map(|f| timed(Call::Callback, || unsafe { f(info, user_data) }));
    w.pass_count_return = now_ns();
    ConfigAnswer {
        user_data,
        passes,
        cont,
        payload,
    }
}

/// CONFIG EXIT: invokes the callback with the CONFIG payload as the tool left it at CONFIG
/// ENTER (the SDK hands its saved copy, so `replay_pass_count` and `replay_continue` still hold
/// what the tool set); returns the CONFIG EXIT timestamp, taken just before the callback.
pub(super) fn config_exit(tool: &mut ReplayTool, w: &WindowRecord) -> u64 {
    let t = now_ns();
    invoke(
        &tool.owner,
        w,
        replay_op::CONFIG,
        CallbackPhase::EXIT,
        &mut tool.config_payload,
        &mut tool.config_ud,
    );
    t
}

/// PASS ENTER, with the context toggles legal for the length of the callback.
pub(super) fn pass_enter(
    tool: &ReplayTool,
    w: &WindowRecord,
    payload: &mut PayloadStore,
    pass_ud: &mut UserData,
) {
    if let Some(ps) = &tool.pass {
        in_pass_enter(|| {
            invoke(
                ps,
                w,
                replay_op::PASS,
                CallbackPhase::ENTER,
                payload,
                pass_ud,
            );
        });
    }
}

/// PASS EXIT.
pub(super) fn pass_exit(
    tool: &ReplayTool,
    w: &WindowRecord,
    payload: &mut PayloadStore,
    pass_ud: &mut UserData,
) {
    if let Some(ps) = &tool.pass {
        invoke(
            ps,
            w,
            replay_op::PASS,
            CallbackPhase::EXIT,
            payload,
            pass_ud,
        );
    }
}

/// Whether another pass follows pass `current` of `total` (0: indefinite): the tool's
/// `replay_continue` (the one in the PASS EXIT payload) decides; without one a fixed loop goes on.
pub(super) fn ask_continue(
    cont: ReplayContinueFn,
    info: KernelDispatchInfo,
    current: u64,
    total: u64,
    pass_ud: UserData,
) -> bool {
    if let Some(f) = cont {
        // SAFETY: the tool stored this callback with the header's signature.
        timed(Call::Callback, || unsafe {
            f(info, current, total, pass_ud)
        }) != 0
    } else {
        total > 0
    }
}
