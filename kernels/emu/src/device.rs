//! The emulated GPU: agents, queues with worker threads that execute packets in order,
//! completion signals, and the async completion-handler thread that delivers KERNEL_DISPATCH
//! COMPLETE records (with GPU start/end) before it releases a dispatch's signal.

use crate::agents::{CPU_AGENT, GPU_AGENT, MAX_GPU_AGENTS};
use crate::clock::now_ns;
use crate::memory::{self, MemKind, Region};
use crate::pacing::pace_until;
use crate::sdk::{CallbackEvent, sdk};
use crossbeam_channel::{Receiver, Sender, unbounded};
use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, KERNEL_DISPATCH_DATA_PIPE_ID_SIZE,
    KERNEL_DISPATCH_DATA_SIZE, KernelDispatchData, KernelDispatchDataPipe, KernelDispatchInfo,
    UserData, kernel_dispatch_op,
};
use parking_lot::{Condvar, Mutex, RwLock};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// An HSA-style signal: a counter the waiter blocks on until it reaches 0.
#[derive(Debug)]
pub struct Signal {
    value: Mutex<i64>,
    cv: Condvar,
}

impl Signal {
    pub fn new(v: i64) -> Arc<Signal> {
        Arc::new(Signal {
            value: Mutex::new(v),
            cv: Condvar::new(),
        })
    }

    pub fn add(&self, d: i64) {
        let mut v = self.value.lock();
        *v += d;
        if *v <= 0 {
            self.cv.notify_all();
        }
    }

    /// Waits until the value is <= 0; false on timeout.
    pub fn wait_zero(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut v = self.value.lock();
        while *v > 0 {
            if self.cv.wait_until(&mut v, deadline).timed_out() {
                return *v <= 0;
            }
        }
        true
    }
}

/// The application's view of one logical dispatch's completion: counted, so the conformance
/// suite can check it fires exactly once, and it releases the queue's outstanding count.
#[derive(Debug)]
pub struct AppCompletion {
    pub dispatch_id: std::sync::atomic::AtomicU64,
    pub fired: AtomicU32,
    queue_outstanding: Arc<Signal>,
}

impl AppCompletion {
    pub fn fire(&self) {
        self.fired.fetch_add(1, Ordering::SeqCst);
        self.queue_outstanding.add(-1);
    }
}

pub type KernelBody = Arc<dyn Fn() + Send + Sync>;

/// What a completed kernel releases.
pub enum Completion {
    /// The application's signal (ordinary path).
    App(Arc<AppCompletion>),
    /// A pooled per-pass signal; the pass reads the GPU times from `times`.
    Pass {
        signal: Arc<Signal>,
        times: Arc<Mutex<PassTimes>>,
    },
}

/// What a pass's completion reports back to the pass: the kernel's start and end on the device,
/// and when the COMPLETE callbacks began (the host's view of the completion, which a tool that
/// only observes replay sees; later than the end by the completion thread's latency).
#[derive(Debug, Clone, Copy, Default)]
pub struct PassTimes {
    pub start: u64,
    pub end: u64,
    pub complete_callback: u64,
}

pub struct KernelPacket {
    pub body: KernelBody,
    pub info: KernelDispatchInfo,
    /// Internal correlation id (the external one is always 0 in the emulator).
    pub corr: u64,
    pub thread_id: u64,
    /// Contexts locally stopped for this pass (kernel-dispatch tracing and the counting
    /// service honour a local stop).
    pub suppressed: Vec<u64>,
    /// The replay pass this packet runs (`None`: not a replay pass).
    pub pass: Option<u64>,
    /// What the counting contexts asked to count (filled at enqueue).
    pub counting: Vec<crate::counting::service::Request>,
    /// The least time the kernel runs: its modelled duration under `--sdk-build` (the worker
    /// waits out what the body left of it); `None` for an unpaced kernel.
    pub floor: Option<Duration>,
    /// How this pass differs from a uniform one (`--pass-model`): the floor is scaled by its
    /// time factor, the counters follow it.
    pub effect: crate::counting::model::PassEffect,
    /// Run after the body (the incomplete-restore model's worklist growth).
    pub after: Option<KernelBody>,
    pub completion: Completion,
}

pub enum Packet {
    Kernel(Box<KernelPacket>),
    /// Barrier-AND: retires once every earlier packet on the queue has.
    Barrier {
        signal: Option<Arc<Signal>>,
        app: Option<Arc<AppCompletion>>,
    },
}

pub struct Queue {
    pub id: u64,
    pub agent: u64,
    tx: Sender<Packet>,
    /// Intercepted dispatches whose async handler has not yet run (`active_async_packets`).
    pub async_active: Arc<AtomicUsize>,
    /// Application dispatches not yet completed (what a stream synchronize waits for).
    pub outstanding: Arc<Signal>,
    pub kernarg: Arc<Region>,
}

struct Done {
    packet: KernelPacket,
    start: u64,
    end: u64,
    async_active: Arc<AtomicUsize>,
}

/// What the async-handler thread processes, in retirement order.
enum Retired {
    Kernel(Box<Done>),
    /// A barrier carrying the application's completion: fired after the records of every kernel
    /// that retired before it (a stuck replay pass's kernel included).
    AppBarrier(Arc<AppCompletion>),
}

static COMPLETIONS: LazyLock<Sender<Retired>> = LazyLock::new(|| {
    let (tx, rx) = unbounded::<Retired>();
    std::thread::Builder::new()
        .name("emu-async-handler".into())
        .spawn(move || completion_thread(rx))
        .expect("spawn completion thread");
    tx
});

static QUEUES: LazyLock<RwLock<Vec<Arc<Queue>>>> = LazyLock::new(|| RwLock::new(Vec::new()));

/// The per-agent writer/reader lock of the replay window (index = agent handle).
static AGENT_LOCKS: LazyLock<Vec<RwLock<()>>> = LazyLock::new(|| {
    (0..GPU_AGENT + MAX_GPU_AGENTS)
        .map(|_| RwLock::new(()))
        .collect()
});

pub fn agent_lock(agent: u64) -> &'static RwLock<()> {
    &AGENT_LOCKS[agent as usize]
}

/// Whether KERNEL_DISPATCH callback data is the 160-byte form with `pipe_id` (newer headers).
static PIPE_ID_RECORDS: AtomicBool = AtomicBool::new(false);

/// Chooses the KERNEL_DISPATCH callback data size for the process (`--dispatch-record`).
pub fn set_pipe_id_records(on: bool) {
    PIPE_ID_RECORDS.store(on, Ordering::SeqCst);
}

/// The KERNEL_DISPATCH callback data: always 160 bytes of storage, with `size` 152 or 160 as
/// the emulated headers have it. `pipe_id` is 0 (the SDK sets it only with KFD signal-less
/// completion, which the emulator does not model).
pub fn dispatch_data(info: KernelDispatchInfo, start: u64, end: u64) -> KernelDispatchDataPipe {
    let size = if PIPE_ID_RECORDS.load(Ordering::Relaxed) {
        KERNEL_DISPATCH_DATA_PIPE_ID_SIZE
    } else {
        KERNEL_DISPATCH_DATA_SIZE
    };
    KernelDispatchDataPipe {
        base: KernelDispatchData {
            size,
            start_timestamp: start,
            end_timestamp: end,
            dispatch_info: info,
        },
        pipe_id: 0,
    }
}

fn completion_thread(rx: Receiver<Retired>) {
    let kind = CallbackTracingKind::KERNEL_DISPATCH.0;
    for retired in rx {
        let done = match retired {
            Retired::Kernel(d) => d,
            Retired::AppBarrier(app) => {
                app.fire();
                continue;
            }
        };
        let p = &done.packet;
        let complete_callback = now_ns();
        let subs = sdk().subscribers(kind, kernel_dispatch_op::COMPLETE);
        for s in subs.iter().filter(|s| !p.suppressed.contains(&s.context)) {
            let mut data = dispatch_data(p.info, done.start, done.end);
            let mut ud = UserData::default();
            s.invoke(
                CallbackEvent {
                    thread_id: p.thread_id,
                    corr: crate::ids::correlation(p.corr),
                    kind,
                    op: kernel_dispatch_op::COMPLETE,
                    phase: CallbackPhase::NONE,
                },
                (&mut data as *mut KernelDispatchDataPipe).cast(),
                &mut ud,
            );
        }
        crate::counting::service::deliver(
            &p.counting,
            &p.info,
            p.corr,
            p.pass,
            (done.start, done.end),
            &p.effect,
        );
        done.async_active.fetch_sub(1, Ordering::SeqCst);
        match &p.completion {
            Completion::App(app) => app.fire(),
            Completion::Pass { signal, times } => {
                *times.lock() = PassTimes {
                    start: done.start,
                    end: done.end,
                    complete_callback,
                };
                signal.add(-1);
            }
        }
    }
}

fn worker(rx: Receiver<Packet>, async_active: Arc<AtomicUsize>) {
    let completions = COMPLETIONS.clone();
    for packet in rx {
        match packet {
            Packet::Kernel(k) => {
                let (start, began) = (now_ns(), Instant::now());
                (k.body)();
                if let Some(after) = &k.after {
                    after();
                }
                if let Some(floor) = k.floor {
                    pace_until(began + floor.mul_f64(k.effect.time));
                }
                let end = now_ns().max(start + 1);
                let _ = completions.send(Retired::Kernel(Box::new(Done {
                    packet: *k,
                    start,
                    end,
                    async_active: async_active.clone(),
                })));
            }
            Packet::Barrier { signal, app } => {
                if let Some(s) = signal {
                    s.add(-1);
                }
                if let Some(a) = app {
                    let _ = completions.send(Retired::AppBarrier(a));
                }
            }
        }
    }
}

/// Creates a queue on `agent` with its worker thread and its kernarg pool allocation.
pub fn create_queue(agent: u64) -> Arc<Queue> {
    let (tx, rx) = unbounded();
    let async_active = Arc::new(AtomicUsize::new(0));
    let id = {
        let q = QUEUES.read();
        0x1000 + q.len() as u64
    };
    let aa = async_active.clone();
    std::thread::Builder::new()
        .name(format!("emu-queue-{id:x}"))
        .spawn(move || worker(rx, aa))
        .expect("spawn queue worker");
    let queue = Arc::new(Queue {
        id,
        agent,
        tx,
        async_active,
        outstanding: Signal::new(0),
        kernarg: memory::allocate(64 * 1024, MemKind::Kernarg, CPU_AGENT),
    });
    QUEUES.write().push(queue.clone());
    queue
}

impl Queue {
    /// Writes a packet to the hardware queue.
    pub fn push(&self, p: Packet) {
        if let Packet::Kernel(_) = p {
            self.async_active.fetch_add(1, Ordering::SeqCst);
        }
        let _ = self.tx.send(p);
    }

    /// A new application completion for one logical dispatch on this queue.
    pub fn app_completion(&self) -> Arc<AppCompletion> {
        self.outstanding.add(1);
        Arc::new(AppCompletion {
            dispatch_id: std::sync::atomic::AtomicU64::new(0),
            fired: AtomicU32::new(0),
            queue_outstanding: self.outstanding.clone(),
        })
    }

    /// `hipStreamSynchronize`: waits for every application dispatch on this queue.
    pub fn synchronize(&self) {
        while !self.outstanding.wait_zero(Duration::from_secs(5)) {}
    }
}

/// Every queue on `agent`.
pub fn queues_of(agent: u64) -> Vec<Arc<Queue>> {
    QUEUES
        .read()
        .iter()
        .filter(|q| q.agent == agent)
        .cloned()
        .collect()
}

/// Every queue.
pub fn all_queues() -> Vec<Arc<Queue>> {
    QUEUES.read().clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn barrier_retires_after_earlier_packets() {
        let q = create_queue(GPU_AGENT);
        let seen = Arc::new(AtomicU64::new(0));
        let s2 = seen.clone();
        let app = q.app_completion();
        q.push(Packet::Kernel(Box::new(KernelPacket {
            body: Arc::new(move || {
                std::thread::sleep(Duration::from_millis(20));
                s2.store(1, Ordering::SeqCst);
            }),
            info: KernelDispatchInfo::default(),
            corr: 1,
            thread_id: 0,
            suppressed: Vec::new(),
            pass: None,
            counting: Vec::new(),
            floor: None,
            effect: Default::default(),
            after: None,
            completion: Completion::App(app.clone()),
        })));
        let drain = Signal::new(1);
        q.push(Packet::Barrier {
            signal: Some(drain.clone()),
            app: None,
        });
        assert!(drain.wait_zero(Duration::from_secs(10)));
        assert_eq!(
            seen.load(Ordering::SeqCst),
            1,
            "the barrier waited for the kernel"
        );
        q.synchronize();
        assert_eq!(app.fired.load(Ordering::SeqCst), 1);
        assert_eq!(q.async_active.load(Ordering::SeqCst), 0);
    }
}
