//! Putting a kernel on a queue: the dispatch info of a launch, the KERNEL_DISPATCH ENQUEUE
//! callbacks and the counting service's dispatch callbacks around the packet write, and the
//! ordinary (not replayed) submission of a dispatch.

use super::config::config;
use super::thread_window;
use crate::clock::thread_id;
use crate::device::{
    AppCompletion, Completion, KernelBody, KernelPacket, Packet, Queue, agent_lock,
};
use crate::ids;
use crate::sdk::{CallbackEvent, Subscriber, sdk};
use krphase_ffi::{
    AgentId, CallbackPhase, CallbackTracingKind, CorrelationId, Dim3, KernelDispatchInfo, QueueId,
    UserData, kernel_dispatch_op,
};
use krphase_kernels::{kernel_name, traffic_per_item};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One kernel launch as the application asks for it.
pub struct Launch {
    pub kernel_id: u64,
    pub grid: u32,
    pub workgroup: u32,
    pub body: KernelBody,
}

/// The least time the kernel of `l` runs. Under `--sdk-build` a kernel that streams memory is
/// paced to its modelled duration (`CostModel::kernel`), so its time is the same in every build,
/// whatever cache state the copies before it leave; otherwise (`None`), and for kernels with
/// nothing to stream, it runs at the CPU's speed.
pub(super) fn kernel_floor(l: &Launch) -> Option<Duration> {
    let traffic = kernel_name(l.kernel_id).and_then(traffic_per_item)?;
    Some(config().model?.kernel(traffic * u64::from(l.grid)))
}

/// The dispatch info every callback and record of this launch carries.
pub(super) fn dispatch_info(queue: &Queue, l: &Launch, dispatch_id: u64) -> KernelDispatchInfo {
    KernelDispatchInfo {
        agent_id: AgentId {
            handle: queue.agent,
        },
        queue_id: QueueId { handle: queue.id },
        kernel_id: l.kernel_id,
        dispatch_id,
        workgroup_size: Dim3 {
            x: l.workgroup,
            y: 1,
            z: 1,
        },
        grid_size: Dim3 {
            x: l.grid,
            y: 1,
            z: 1,
        },
        ..Default::default()
    }
}

/// The KERNEL_DISPATCH ENQUEUE callbacks around `push`, on the submitting thread.
pub(super) fn enqueue(queue: &Queue, mut packet: KernelPacket) {
    let kind = CallbackTracingKind::KERNEL_DISPATCH.0;
    let subs: Vec<Subscriber> = sdk()
        .subscribers(kind, kernel_dispatch_op::ENQUEUE)
        .into_iter()
        .filter(|s| !packet.suppressed.contains(&s.context))
        .collect();
    let mut uds = vec![UserData::default(); subs.len()];
    let mut data = crate::device::dispatch_data(packet.info, 0, 0);
    let (tid, corr) = (packet.thread_id, ids::correlation(packet.corr));
    for phase in [CallbackPhase::ENTER, CallbackPhase::EXIT] {
        for (s, ud) in subs.iter().zip(uds.iter_mut()) {
            s.invoke(
                CallbackEvent {
                    thread_id: tid,
                    corr,
                    kind,
                    op: kernel_dispatch_op::ENQUEUE,
                    phase,
                },
                (&mut data as *mut krphase_ffi::KernelDispatchDataPipe).cast(),
                ud,
            );
        }
    }
    // The counting service's dispatch callbacks run once the ENQUEUE callbacks have captured
    // the active contexts, just before the packet reaches the queue.
    packet.counting =
        crate::counting::service::dispatch(&packet.info, packet.corr, &packet.suppressed);
    queue.push(Packet::Kernel(Box::new(packet)));
}

/// Submits the dispatch once, as the application wrote it, completing `app`. `reader` takes
/// the reader side of the agent's lock (any replay service is configured), unless this thread
/// is inside a window on the agent and so already holds the writer side.
pub(super) fn submit_once(
    queue: &Queue,
    l: Launch,
    dispatch_id: u64,
    corr: CorrelationId,
    app: Arc<AppCompletion>,
    reader: bool,
) {
    let own_window = thread_window::in_window_on(queue.agent);
    let _guard = if reader && !own_window {
        Some(agent_lock(queue.agent).read())
    } else {
        None
    };
    app.dispatch_id.store(dispatch_id, Ordering::SeqCst);
    let floor = kernel_floor(&l);
    let packet = KernelPacket {
        info: dispatch_info(queue, &l, dispatch_id),
        body: l.body,
        corr: corr.internal,
        thread_id: thread_id(),
        suppressed: Vec::new(),
        pass: None,
        counting: Vec::new(),
        floor,
        effect: Default::default(),
        after: None,
        completion: Completion::App(app),
    };
    enqueue(queue, packet);
}
