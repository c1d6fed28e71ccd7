//! The window model: what the reconstruction emits. A replayed [`Window`] with its [`Pass`]es,
//! [`Restore`]s and [`ContinueCall`]s, a [`Decline`], a [`PlainDispatch`] run once, and a
//! [`CounterReading`] that came out on its own, each as one [`Output`]. Serialized as the
//! golden files' `outputs` and read by the analyzer's import.

use krphase_format::event::CounterValue;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
}

impl Interval {
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    pub index: u32,
    /// Host time just inside PASS ENTER / PASS EXIT (drive mode).
    pub enter: Option<u64>,
    pub exit: Option<u64>,
    /// KERNEL_DISPATCH ENQUEUE ENTER/EXIT of this pass, when traced.
    pub enqueue_enter: Option<u64>,
    pub enqueue_exit: Option<u64>,
    pub gpu_start: Option<u64>,
    pub gpu_end: Option<u64>,
    /// Host time at this pass's COMPLETE callback (COMPLETE_HOST), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_host: Option<u64>,
    /// PASS ENTER without PASS EXIT: the SDK broke the loop in this pass (`pass_drain_stuck`),
    /// or the file ends inside it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub incomplete: bool,
    /// Counter values the SDK's dispatch counting service reported for this pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterReading>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The gap after PASS `after_pass`: `start..end` is the restore (continue return, or PASS EXIT
/// when no CONTINUE record exists, → next PASS ENTER).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    pub after_pass: u32,
    pub start: u64,
    pub end: u64,
    /// PASS EXIT → the continue callback's return (the SDK's loop decision), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_phase: Option<Interval>,
}

/// One call of the tool's `replay_continue` (drive mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueCall {
    /// The pass just finished, as the SDK passed it.
    pub after_pass: u32,
    /// Total passes as the SDK passed it (0: indefinite loop).
    pub total: u32,
    /// Callback entry → just before it returned.
    pub call: Interval,
    /// The loop continues.
    pub result: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Drive,
    Observe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Replayed,
    /// The tool asked for N > 1 but no PASS ran (the SDK declined; the reason is in its log).
    Declined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ByteEstimate {
    /// Coarse-grained, agent-owned, not kernarg, allocated after configure.
    pub classified: u64,
    pub classified_regions: u16,
    /// Every live allocation on the agent.
    pub upper_bound: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub dispatch_id: u64,
    pub correlation_id: Option<u64>,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub agent: Option<u64>,
    pub queue: Option<u64>,
    pub thread: u32,
    pub source: Source,
    pub outcome: Outcome,
    pub requested_passes: Option<u64>,
    pub executed_passes: u64,
    pub config_enter: Option<u64>,
    pub pass_count_return: Option<u64>,
    pub config_exit: Option<u64>,
    pub passes: Vec<Pass>,
    pub restores: Vec<Restore>,
    /// Pass-count return → PASS 0 ENTER.
    pub pre_pass: Option<Interval>,
    /// Last PASS EXIT → CONFIG EXIT (none when the last pass is incomplete).
    pub tail: Option<Interval>,
    pub bytes: Option<ByteEstimate>,
    /// Every continue decision, in order (drive mode; empty in older files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub continues: Vec<ContinueCall>,
    /// Incomplete pass's ENTER → CONFIG EXIT: the stuck pass, the SDK's drain wait and the loop
    /// exit (`pass_drain_stuck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<Interval>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineReason {
    /// Pass-count callback left NULL (kernel filter).
    OptOut,
    /// Pass-count returned 1.
    #[serde(rename = "pass_count_1")]
    PassCountOne,
    /// Pass-count returned 0 without a continue callback.
    ZeroWithoutContinue,
    /// The tool had stopped driving (payload layout not confirmed).
    Stopped,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decline {
    pub dispatch_id: u64,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub thread: u32,
    pub reason: DeclineReason,
    pub config_enter: Option<u64>,
    pub config_exit: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlainDispatch {
    pub dispatch_id: u64,
    pub kernel_id: Option<u64>,
    pub kernel_name: Option<String>,
    pub thread: u32,
    pub agent: Option<u64>,
    pub queue: Option<u64>,
    pub correlation_id: Option<u64>,
    /// True when a CONFIG pair preceded it (opt-out or SDK decline).
    pub had_config: bool,
    pub enqueue_enter: Option<u64>,
    pub enqueue_exit: Option<u64>,
    pub gpu_start: Option<u64>,
    pub gpu_end: Option<u64>,
}

impl PlainDispatch {
    /// Host time spent in the traced enqueue (ENQUEUE ENTER → EXIT).
    pub fn enqueue_cost(&self) -> Option<u64> {
        Some(self.enqueue_exit?.saturating_sub(self.enqueue_enter?))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Output {
    Window(Window),
    Decline(Decline),
    Plain(PlainDispatch),
    /// A counter value whose dispatch was emitted before the value reached the file, or whose
    /// dispatch has no pass of that index.
    Counter(CounterReading),
}

/// One counter's value in one pass of a dispatch, from the SDK's dispatch counting service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterReading {
    pub dispatch_id: u64,
    /// The pass the dispatch was counted in (0 for a dispatch run once).
    pub pass: u32,
    /// The SDK's counter id.
    pub counter: u64,
    /// The counter's name, when the string table had it.
    pub name: Option<String>,
    pub value: CounterValue,
    /// Dimension instances summed into `value` (saturating at 255).
    pub instances: u8,
}
