//! `Sdk` against a fake SDK compiled from `tests/fake_sdk/fake_sdk.c`: name lookups, status
//! mapping, the one-owner rule, and the by-value callback ABI as C calls it.

mod support;

use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, ContextId, HsaAmdPointerInfo,
    KernelDispatchInfo, LoadError, PayloadLayout, ReplayPayload, Sdk, Status, UserData,
    hsa_global_flag, hsa_pointer_type,
};
use std::ffi::c_void;
use std::sync::Mutex;
use support::build_fake;

fn open_fake(tag: &str, defines: &[&str]) -> (Sdk, libloading::Library) {
    let path = build_fake(tag, defines, None);
    // SAFETY: the fake SDK's initialisers are empty; it is the test's own C file.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open fake SDK");
    // SAFETY: as above; a second handle to the same mapped image, kept for the test drivers.
    let extra = unsafe { libloading::Library::new(&path) }.expect("reopen fake SDK");
    (Sdk::from_library(lib).expect("fake SDK resolves"), extra)
}

const KERNEL_REPLAY: CallbackTracingKind = CallbackTracingKind(26);

#[test]
fn kinds_and_operations_are_found_by_name() {
    let (sdk, _lib) = open_fake("names", &[]);
    assert_eq!(sdk.version().unwrap().to_string(), "1.4.1");
    assert_eq!(sdk.version_legacy().unwrap().unwrap().to_string(), "1.4.1");

    let kinds = sdk.kinds().unwrap();
    assert_eq!(
        kinds.len(),
        28,
        "NONE..RANGE_REPLAY, as the SDK iterates them"
    );
    assert_eq!(kinds[0], (CallbackTracingKind::NONE, "NONE".to_string()));
    assert_eq!(
        kinds[12],
        (
            CallbackTracingKind::KERNEL_DISPATCH,
            "KERNEL_DISPATCH".to_string()
        )
    );
    assert_eq!(sdk.find_kind("KERNEL_REPLAY").unwrap(), Some(KERNEL_REPLAY));
    assert_eq!(
        sdk.find_kind("ROCPROFILER_CALLBACK_TRACING_KERNEL_REPLAY")
            .unwrap(),
        Some(KERNEL_REPLAY)
    );
    assert_eq!(
        sdk.find_kind("HIP_EVENT").unwrap(),
        Some(CallbackTracingKind(25))
    );
    assert_eq!(sdk.find_kind("NO_SUCH_KIND").unwrap(), None);

    let ops = sdk.operations(KERNEL_REPLAY).unwrap();
    let names: Vec<_> = ops.iter().map(|(o, n)| (*o, n.as_str())).collect();
    assert_eq!(
        names,
        [
            (0, "KERNEL_REPLAY_NONE"),
            (1, "KERNEL_REPLAY_CONFIG"),
            (2, "KERNEL_REPLAY_PASS")
        ]
    );
    assert_eq!(
        sdk.find_operation(KERNEL_REPLAY, "CONFIG").unwrap(),
        Some(1)
    );
    assert_eq!(sdk.find_operation(KERNEL_REPLAY, "PASS").unwrap(), Some(2));
    assert_eq!(sdk.find_operation(KERNEL_REPLAY, "SNAPSHOT").unwrap(), None);
    assert_eq!(
        sdk.operation_name(KERNEL_REPLAY, 9),
        Err(Status::OPERATION_NOT_FOUND)
    );
    assert_eq!(
        sdk.operations(CallbackTracingKind::NONE),
        Err(Status::INVALID_ARGUMENT)
    );
    assert_eq!(
        sdk.kind_name(CallbackTracingKind(99)),
        Err(Status::KIND_NOT_FOUND)
    );
}

#[test]
fn contexts_and_the_one_owner_rule() {
    let (sdk, _lib) = open_fake("contexts", &[]);
    let a = sdk.create_context().unwrap();
    let b = sdk.create_context().unwrap();
    assert_ne!(a.handle, 0);
    assert_ne!(a, b);
    assert_eq!(sdk.context_is_active(a), Some(Ok(false)));
    sdk.start_context(a).unwrap();
    assert_eq!(sdk.context_is_active(a), Some(Ok(true)));
    sdk.stop_context(a).unwrap();
    assert_eq!(sdk.context_is_active(a), Some(Ok(false)));
    let bogus = ContextId { handle: 999 };
    assert_eq!(sdk.start_context(bogus), Err(Status::CONTEXT_NOT_FOUND));
    assert_eq!(sdk.stop_context(bogus), Err(Status::CONTEXT_NOT_FOUND));

    sdk.configure_callback_tracing(a, KERNEL_REPLAY, &[], Some(noop_cb), std::ptr::null_mut())
        .unwrap();
    let second = sdk.configure_callback_tracing(
        b,
        KERNEL_REPLAY,
        &[1, 2],
        Some(noop_cb),
        std::ptr::null_mut(),
    );
    assert_eq!(second, Err(Status::SERVICE_ALREADY_CONFIGURED));
    assert_eq!(
        second.unwrap_err().to_string(),
        "ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED (15)"
    );
    // Other kinds still configure on the second context; a bad operation list is refused.
    let kd = CallbackTracingKind::KERNEL_DISPATCH;
    sdk.configure_callback_tracing(b, kd, &[2], Some(noop_cb), std::ptr::null_mut())
        .unwrap();
    assert_eq!(
        sdk.configure_callback_tracing(a, kd, &[7], Some(noop_cb), std::ptr::null_mut()),
        Err(Status::OPERATION_NOT_FOUND)
    );
    assert_eq!(
        sdk.status_name(15).as_deref(),
        Some("ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED")
    );
    assert_eq!(sdk.status_name(99), None);
}

unsafe extern "C" fn noop_cb(_: CallbackTracingRecord, _: *mut UserData, _: *mut c_void) {}

#[test]
fn timestamp_thread_id_and_pointer_info() {
    let (sdk, _lib) = open_fake("clock", &[]);
    let boottime = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid out-pointer.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) },
            0
        );
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let before = boottime();
    let t = sdk.timestamp().unwrap();
    let after = boottime();
    assert!(
        before <= t && t <= after,
        "{before} <= {t} <= {after}: CLOCK_BOOTTIME ns"
    );
    // SAFETY: gettid has no preconditions.
    assert_eq!(sdk.thread_id(), Some(unsafe { libc::gettid() } as u64));
    assert_eq!(sdk.is_initialized(), Some(Ok(krphase_ffi::InitState::Done)));
    assert_eq!(sdk.is_finalized(), Some(Ok(krphase_ffi::InitState::NotYet)));

    let f = sdk
        .hsa_pointer_info()
        .expect("fake exports hsa_amd_pointer_info");
    let mut info = HsaAmdPointerInfo::default();
    let probe = 0x7000_1234usize as *const c_void;
    // SAFETY: valid info struct with size set; the accessible-agent outputs are not wanted.
    let rc = unsafe {
        f(
            probe,
            &mut info,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, krphase_ffi::HSA_STATUS_SUCCESS);
    assert_eq!(info.size, 56);
    assert_eq!(info.type_, hsa_pointer_type::HSA);
    assert_eq!(info.agent_base_address as usize, 0x7000_1000);
    assert_eq!(info.size_in_bytes, 4096);
    assert_eq!(info.agent_owner.handle, 7);
    assert_eq!(info.global_flags, hsa_global_flag::COARSE_GRAINED);
}

#[test]
fn missing_required_symbol_is_named() {
    let path = build_fake("no-timestamp", &["FAKE_OMIT_TIMESTAMP"], None);
    // SAFETY: the test's own C file; empty initialisers.
    let lib = unsafe { libloading::Library::new(&path) }.unwrap();
    let err = Sdk::from_library(lib).unwrap_err();
    assert_eq!(
        err,
        LoadError::MissingSymbols(vec!["rocprofiler_get_timestamp"])
    );
    assert!(
        err.to_string()
            .ends_with("missing required symbol(s): rocprofiler_get_timestamp")
    );
}

#[test]
fn optional_symbols_may_be_absent() {
    let (sdk, _lib) = open_fake("no-optional", &["FAKE_NO_OPTIONAL"]);
    assert_eq!(sdk.thread_id(), None);
    assert!(sdk.version_legacy().is_none());
    assert!(sdk.context_is_active(ContextId { handle: 1 }).is_none());
    assert!(sdk.status_name(15).is_none());
    assert!(
        sdk.hsa_pointer_info().is_none(),
        "not in the fake, not in global scope"
    );
    assert!(sdk.timestamp().is_ok());
}

/// What the replay callback saw, checked after C returns (a panic must not cross into C).
#[derive(Default, Debug)]
struct Seen {
    layout: Option<PayloadLayout>,
    records: Vec<(u64, u32, i32, u32, u64, u64, u64)>,
    failures: Vec<String>,
}

static SEEN: Mutex<Option<Seen>> = Mutex::new(None);

unsafe extern "C" fn replay_cb(
    rec: CallbackTracingRecord,
    user_data: *mut UserData,
    data: *mut c_void,
) {
    let r = std::panic::catch_unwind(|| {
        let mut guard = SEEN.lock().unwrap();
        let seen = guard.get_or_insert_with(Seen::default);
        assert_eq!(data as usize, 0xfeed, "callback_args passed through");
        let layout = seen.layout.expect("layout chosen before firing");
        seen.records.push((
            rec.context_id.handle,
            rec.kind.0,
            rec.operation,
            rec.phase.0,
            rec.correlation_id.internal,
            rec.correlation_id.external.as_u64(),
            rec.correlation_id.ancestor,
        ));
        assert_eq!(rec.phase, CallbackPhase::ENTER);
        // SAFETY: the record's payload is the SDK's replay payload, live for this callback.
        let mut p = unsafe { ReplayPayload::from_raw(rec.payload) }.expect("payload");
        assert_eq!(p.size(), 184);
        assert!(p.set_pass_count(layout, Some(pass_count)));
        // SAFETY: the SDK hands a valid user-data slot.
        unsafe { (*user_data).value = 5 };
        p.dispatch_info().dispatch_id
    });
    if let Err(e) = r {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| format!("{e:?}"));
        if let Ok(mut g) = SEEN.lock() {
            g.get_or_insert_with(Seen::default).failures.push(msg);
        }
    }
}

/// Encodes what arrived by value so the test can check it: 0 if any field is wrong.
unsafe extern "C" fn pass_count(info: KernelDispatchInfo, ud: UserData) -> u64 {
    let ok = info.size == krphase_ffi::KERNEL_DISPATCH_INFO_USED_SIZE
        && info.agent_id.handle == 3
        && info.queue_id.handle == 4
        && info.private_segment_size == 16
        && info.group_segment_size == 1024
        && (
            info.workgroup_size.x,
            info.workgroup_size.y,
            info.workgroup_size.z,
        ) == (256, 1, 1)
        && (info.grid_size.x, info.grid_size.y, info.grid_size.z) == (1_048_576, 2, 3);
    if ok {
        info.dispatch_id * 1000 + info.kernel_id * 10 + ud.as_u64()
    } else {
        0
    }
}

#[test]
fn replay_callbacks_cross_the_c_abi_in_both_layouts() {
    let (sdk, lib) = open_fake("replay", &[]);
    // SAFETY: the fake's test driver, declared with its C signature.
    let fire = unsafe {
        lib.get::<unsafe extern "C" fn(i32, u64, u64) -> u64>(b"fake_sdk_fire_replay_config")
    }
    .unwrap();
    let kind = sdk.find_kind("KERNEL_REPLAY").unwrap().unwrap();
    let ctx = sdk.create_context().unwrap();
    let config = sdk.find_operation(kind, "CONFIG").unwrap().unwrap();
    let pass = sdk.find_operation(kind, "PASS").unwrap().unwrap();
    sdk.configure_callback_tracing(
        ctx,
        kind,
        &[config, pass],
        Some(replay_cb),
        0xfeed as *mut c_void,
    )
    .unwrap();
    sdk.start_context(ctx).unwrap();

    for (layout, tag, dispatch) in [
        (PayloadLayout::B, b'b', 41u64),
        (PayloadLayout::A, b'a', 42),
    ] {
        SEEN.lock()
            .unwrap()
            .get_or_insert_with(Seen::default)
            .layout = Some(layout);
        // SAFETY: driver call; the callback above is registered and catches its panics.
        let n = unsafe { fire(i32::from(tag), dispatch, 9) };
        assert_eq!(
            n,
            dispatch * 1000 + 90 + 5,
            "layout {layout:?}: pass count via the tool's slot"
        );
    }
    let seen = SEEN.lock().unwrap().take().unwrap();
    assert!(
        seen.failures.is_empty(),
        "callback failures: {:?}",
        seen.failures
    );
    assert_eq!(
        seen.records,
        [
            (ctx.handle, 26, 1, 1, 1041, 77, 5),
            (ctx.handle, 26, 1, 1, 1042, 77, 5)
        ]
    );
}
