//! The emulated SDK's state: initialization status, contexts, callback-tracing services, the
//! process-wide KERNEL_REPLAY claim, and callback delivery. The exported C functions
//! (`main.rs`/`exports.rs`) are thin wrappers over the safe functions here.

use crate::kinds;
use krphase_ffi::{
    CallbackPhase, CallbackTracingFn, CallbackTracingKind, CallbackTracingRecord, ContextId,
    CorrelationId, CounterConfigId, CounterRecord, DispatchCountingServiceData, Status,
    TracingOperation, UserData,
};
use parking_lot::RwLock;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

pub type SdkResult = Result<(), Status>;

struct Service {
    kind: u32,
    /// `None` subscribes to every operation.
    ops: Option<Vec<i32>>,
    callback: unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut c_void),
    data: usize,
}

/// A context's dispatch counting service (the callback form): the dispatch callback that
/// picks a config and the record callback that receives the counts, with their data pointers.
#[derive(Clone, Copy, Debug)]
pub struct CountingService {
    pub dispatch: unsafe extern "C" fn(
        DispatchCountingServiceData,
        *mut CounterConfigId,
        *mut UserData,
        *mut c_void,
    ),
    pub dispatch_data: usize,
    pub record: unsafe extern "C" fn(
        DispatchCountingServiceData,
        *mut CounterRecord,
        usize,
        UserData,
        *mut c_void,
    ),
    pub record_data: usize,
}

/// An active context's counting service.
#[derive(Clone, Copy, Debug)]
pub struct CountingSubscriber {
    pub context: u64,
    pub service: CountingService,
}

struct Context {
    id: u64,
    client: u32,
    active: AtomicBool,
    services: Vec<Service>,
    counting: Option<CountingService>,
}

pub struct Sdk {
    /// 0 not yet, -1 in progress (the configuration window), 1 done.
    init_status: AtomicI32,
    fini_status: AtomicI32,
    contexts: RwLock<Vec<Arc<RwLock<Context>>>>,
    next_context: AtomicU64,
    replay_claim: AtomicBool,
    range_claim: AtomicBool,
    /// Set once KERNEL_REPLAY is configured: the allocation tracker records from then on.
    tracking: AtomicBool,
    /// The client whose configure/initialize is running (contexts are tagged with it).
    current_client: AtomicU32,
    version: RwLock<(u32, u32, u32)>,
}

static SDK: LazyLock<Sdk> = LazyLock::new(|| Sdk {
    init_status: AtomicI32::new(0),
    fini_status: AtomicI32::new(0),
    contexts: RwLock::new(Vec::new()),
    next_context: AtomicU64::new(1),
    replay_claim: AtomicBool::new(false),
    range_claim: AtomicBool::new(false),
    tracking: AtomicBool::new(false),
    current_client: AtomicU32::new(u32::MAX),
    version: RwLock::new((1, 4, 1)),
});

pub fn sdk() -> &'static Sdk {
    &SDK
}

/// One subscriber of a kind/operation: an active context's callback.
#[derive(Clone, Copy, Debug)]
pub struct Subscriber {
    pub context: u64,
    callback: unsafe extern "C" fn(CallbackTracingRecord, *mut UserData, *mut c_void),
    data: usize,
}

/// What a callback record says besides its context and payload: the thread and correlation id
/// it belongs to, and its kind, operation and phase.
#[derive(Clone, Copy, Debug)]
pub struct CallbackEvent {
    pub thread_id: u64,
    pub corr: CorrelationId,
    pub kind: u32,
    pub op: i32,
    pub phase: CallbackPhase,
}

impl Subscriber {
    /// Delivers one callback record. `payload` must stay valid for the call.
    pub fn invoke(&self, event: CallbackEvent, payload: *mut c_void, user_data: &mut UserData) {
        let record = CallbackTracingRecord {
            context_id: ContextId {
                handle: self.context,
            },
            thread_id: event.thread_id,
            correlation_id: event.corr,
            kind: CallbackTracingKind(event.kind),
            operation: event.op,
            phase: event.phase,
            payload,
        };
        // SAFETY: the callback was registered by a tool through the C API with this exact
        // signature; the payload and user_data outlive the call.
        crate::tool_time::timed(crate::tool_time::Call::Callback, || unsafe {
            (self.callback)(record, user_data as *mut UserData, self.data as *mut c_void)
        });
    }
}

impl Sdk {
    pub fn set_version(&self, v: (u32, u32, u32)) {
        *self.version.write() = v;
    }

    pub fn version(&self) -> (u32, u32, u32) {
        *self.version.read()
    }

    pub fn init_status(&self) -> i32 {
        self.init_status.load(Ordering::SeqCst)
    }

    pub fn set_init_status(&self, s: i32) {
        self.init_status.store(s, Ordering::SeqCst);
    }

    pub fn fini_status(&self) -> i32 {
        self.fini_status.load(Ordering::SeqCst)
    }

    pub fn set_fini_status(&self, s: i32) {
        self.fini_status.store(s, Ordering::SeqCst);
    }

    pub fn finalizing(&self) -> bool {
        self.fini_status() != 0
    }

    pub fn set_current_client(&self, c: u32) {
        self.current_client.store(c, Ordering::SeqCst);
    }

    pub fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Relaxed)
    }

    /// Whether any context in the process has claimed KERNEL_REPLAY (ordinary submits then take
    /// the reader side of the per-agent lock).
    pub fn replay_claimed(&self) -> bool {
        self.replay_claim.load(Ordering::Relaxed)
    }

    fn find(&self, id: u64) -> Option<Arc<RwLock<Context>>> {
        if id == 0 {
            return None;
        }
        self.contexts
            .read()
            .iter()
            .find(|c| c.read().id == id)
            .cloned()
    }

    pub fn create_context(&self, id: &mut ContextId) -> SdkResult {
        if id.handle != 0 {
            return Err(Status::CONTEXT_ID_NOT_ZERO);
        }
        *id = ContextId { handle: 0 };
        if self.init_status() != -1 {
            return Err(Status::CONFIGURATION_LOCKED);
        }
        let handle = self.next_context.fetch_add(1, Ordering::SeqCst);
        self.contexts.write().push(Arc::new(RwLock::new(Context {
            id: handle,
            client: self.current_client.load(Ordering::SeqCst),
            active: AtomicBool::new(false),
            services: Vec::new(),
            counting: None,
        })));
        *id = ContextId { handle };
        Ok(())
    }

    pub fn start_context(&self, id: ContextId) -> SdkResult {
        let ctx = self.find(id.handle).ok_or(Status::CONTEXT_NOT_FOUND)?;
        if self.finalizing() {
            return Err(Status::CONFIGURATION_LOCKED);
        }
        // Counter collection programs the agents' counters: two active contexts that both
        // count (neither restricted to other agents) conflict.
        if ctx.read().counting.is_some()
            && self
                .counting_subscribers()
                .iter()
                .any(|s| s.context != id.handle)
        {
            return Err(Status(12)); // ERROR_CONTEXT_CONFLICT
        }
        ctx.read().active.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// `rocprofiler_configure_callback_dispatch_counting_service`: one counting service per
    /// context, configured inside the configuration window.
    pub fn configure_dispatch_counting(&self, id: ContextId, svc: CountingService) -> SdkResult {
        if self.init_status() != -1 {
            return Err(Status::CONFIGURATION_LOCKED);
        }
        let ctx = self.find(id.handle).ok_or(Status(10))?; // ERROR_CONTEXT_INVALID
        let mut c = ctx.write();
        if c.counting.is_some() {
            return Err(Status::SERVICE_ALREADY_CONFIGURED);
        }
        c.counting = Some(svc);
        Ok(())
    }

    /// Active contexts with a counting service, in creation order.
    pub fn counting_subscribers(&self) -> Vec<CountingSubscriber> {
        self.contexts
            .read()
            .iter()
            .filter_map(|c| {
                let c = c.read();
                let service = c.counting?;
                c.active
                    .load(Ordering::SeqCst)
                    .then_some(CountingSubscriber {
                        context: c.id,
                        service,
                    })
            })
            .collect()
    }

    pub fn stop_context(&self, id: ContextId) -> SdkResult {
        let ctx = self.find(id.handle).ok_or(Status::CONTEXT_NOT_FOUND)?;
        if self.fini_status() == 1 {
            return Ok(());
        }
        ctx.read().active.store(false, Ordering::SeqCst);
        Ok(())
    }

    pub fn context_exists(&self, id: ContextId) -> bool {
        self.find(id.handle).is_some()
    }

    pub fn context_is_active(&self, id: ContextId) -> Result<bool, Status> {
        let ctx = self.find(id.handle).ok_or(Status::CONTEXT_NOT_FOUND)?;
        let a = ctx.read().active.load(Ordering::SeqCst);
        Ok(a)
    }

    pub fn configure_callback_tracing(
        &self,
        id: ContextId,
        kind: u32,
        ops: &[TracingOperation],
        callback: CallbackTracingFn,
        data: *mut c_void,
    ) -> SdkResult {
        if self.init_status() != -1 {
            return Err(Status::CONFIGURATION_LOCKED);
        }
        let ctx = self.find(id.handle).ok_or(Status::CONTEXT_NOT_FOUND)?;
        let table = kinds::table();
        if kind == 0 || kind >= table.last() {
            return Err(Status::KIND_NOT_FOUND);
        }
        let nops = table.operations(kind).len() as i32;
        if ops.iter().any(|&o| o < 0 || o >= nops) {
            return Err(Status::OPERATION_NOT_FOUND);
        }
        let Some(callback) = callback else {
            return Err(Status::INVALID_ARGUMENT);
        };
        let mut c = ctx.write();
        if c.services.iter().any(|s| s.kind == kind) {
            return Err(Status::SERVICE_ALREADY_CONFIGURED);
        }
        let claim = if kind == table.kernel_replay {
            Some(&self.replay_claim)
        } else if Some(kind) == table.range_replay {
            Some(&self.range_claim)
        } else {
            None
        };
        if let Some(flag) = claim
            && flag
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return Err(Status::SERVICE_ALREADY_CONFIGURED);
        }
        if kind == table.kernel_replay {
            self.tracking.store(true, Ordering::SeqCst);
        }
        c.services.push(Service {
            kind,
            ops: if ops.is_empty() {
                None
            } else {
                Some(ops.to_vec())
            },
            callback,
            data: data as usize,
        });
        Ok(())
    }

    /// Active contexts subscribed to `kind`/`op`, in creation order.
    pub fn subscribers(&self, kind: u32, op: i32) -> Vec<Subscriber> {
        let mut out = Vec::new();
        for c in self.contexts.read().iter() {
            let c = c.read();
            if !c.active.load(Ordering::SeqCst) {
                continue;
            }
            for s in &c.services {
                if s.kind == kind && s.ops.as_ref().is_none_or(|o| o.contains(&op)) {
                    out.push(Subscriber {
                        context: c.id,
                        callback: s.callback,
                        data: s.data,
                    });
                }
            }
        }
        out
    }

    /// The context that owns replay, if it is active and covers the CONFIG operation.
    pub fn replay_owner(&self) -> Option<Subscriber> {
        if !self.replay_claimed() {
            return None;
        }
        self.subscribers(kinds::table().kernel_replay, kinds::replay_op::CONFIG)
            .into_iter()
            .next()
    }

    /// The owner's callback for the PASS operation, if its subscription covers it.
    pub fn replay_pass_subscriber(&self, owner: &Subscriber) -> Option<Subscriber> {
        self.subscribers(kinds::table().kernel_replay, kinds::replay_op::PASS)
            .into_iter()
            .find(|s| s.context == owner.context)
    }

    /// Contexts created by `client`.
    pub fn client_contexts(&self, client: u32) -> Vec<ContextId> {
        self.contexts
            .read()
            .iter()
            .filter(|c| c.read().client == client)
            .map(|c| ContextId {
                handle: c.read().id,
            })
            .collect()
    }

    /// Deregisters a client's contexts (a client whose configure returned NULL), releasing any
    /// replay claim they held.
    pub fn remove_client_contexts(&self, client: u32) {
        let table = kinds::table();
        let mut all = self.contexts.write();
        all.retain(|c| {
            let c = c.read();
            if c.client != client {
                return true;
            }
            for s in &c.services {
                if s.kind == table.kernel_replay {
                    self.replay_claim.store(false, Ordering::SeqCst);
                }
                if Some(s.kind) == table.range_replay {
                    self.range_claim.store(false, Ordering::SeqCst);
                }
            }
            false
        });
    }
}
