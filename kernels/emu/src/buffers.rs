//! The buffers tools create and the callback threads they assign them to. The emulator writes no
//! records into buffers (no buffer-record service is modelled: buffer tracing, PC sampling and the
//! buffered counting services answer "not available"), so a flush has nothing to deliver and never
//! calls the tool; creation, assignment, flush and destruction follow the SDK's rules and
//! statuses.

use crate::sdk::sdk;
use krphase_ffi::{BufferId, CallbackThread, ContextId, Status};
use parking_lot::Mutex;
use std::collections::HashMap;

/// One created buffer: its context and, once assigned, its delivery thread.
#[derive(Debug, Clone, Copy)]
pub struct Buffer {
    pub context: u64,
    pub size: usize,
    pub watermark: usize,
    pub policy: u32,
    pub thread: Option<u64>,
}

#[derive(Default)]
struct Registry {
    buffers: HashMap<u64, Buffer>,
    threads: Vec<u64>,
    next: u64,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut g = REGISTRY.lock();
    f(g.get_or_insert_with(|| Registry {
        next: 1,
        ..Registry::default()
    }))
}

/// Only inside the configuration window (a tool's configure or initialize), as in the SDK.
fn configuring() -> Result<(), Status> {
    if sdk().init_status() == -1 {
        Ok(())
    } else {
        Err(Status::CONFIGURATION_LOCKED)
    }
}

/// `rocprofiler_create_buffer` (the callback and out-pointer are checked by the caller).
pub fn create(
    context: ContextId,
    size: usize,
    watermark: usize,
    policy: u32,
) -> Result<BufferId, Status> {
    configuring()?;
    if !sdk().context_exists(context) {
        return Err(Status::CONTEXT_NOT_FOUND);
    }
    if watermark > size {
        return Err(Status::INVALID_ARGUMENT);
    }
    Ok(with(|r| {
        let handle = r.next;
        r.next += 1;
        r.buffers.insert(
            handle,
            Buffer {
                context: context.handle,
                size,
                watermark,
                policy,
                thread: None,
            },
        );
        BufferId { handle }
    }))
}

/// `rocprofiler_flush_buffer`: nothing is ever pending, so a known buffer flushes at once.
pub fn flush(id: BufferId) -> Result<(), Status> {
    with(|r| r.buffers.contains_key(&id.handle))
        .then_some(())
        .ok_or(Status::BUFFER_NOT_FOUND)
}

/// `rocprofiler_destroy_buffer`.
pub fn destroy(id: BufferId) -> Result<(), Status> {
    with(|r| r.buffers.remove(&id.handle))
        .map(|_| ())
        .ok_or(Status::BUFFER_NOT_FOUND)
}

/// `rocprofiler_create_callback_thread`.
pub fn create_thread() -> Result<CallbackThread, Status> {
    configuring()?;
    Ok(with(|r| {
        let handle = r.next;
        r.next += 1;
        r.threads.push(handle);
        CallbackThread { handle }
    }))
}

/// `rocprofiler_assign_callback_thread`.
pub fn assign(buffer: BufferId, thread: CallbackThread) -> Result<(), Status> {
    configuring()?;
    with(|r| {
        if !r.threads.contains(&thread.handle) {
            return Err(Status::THREAD_NOT_FOUND);
        }
        let b = r
            .buffers
            .get_mut(&buffer.handle)
            .ok_or(Status::BUFFER_NOT_FOUND)?;
        b.thread = Some(thread.handle);
        Ok(())
    })
}

/// A buffer's state, for tests and the ground truth.
pub fn get(id: BufferId) -> Option<Buffer> {
    with(|r| r.buffers.get(&id.handle).copied())
}
