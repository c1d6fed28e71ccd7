//! The rocprofiler-sdk header check: finds the installed SDK headers, generates bindings from
//! them, and writes compile-time assertions that our declarations match (size and every field
//! offset), plus which kernel-replay payload layout and dispatch records the headers declare.

use crate::shared::{DEFAULT_ROCM, ENV_ROCM, fail, struct_fields};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ENV_INCLUDE: &str = "ROCPROFILER_SDK_INCLUDE_DIR";

/// The include directory holding `rocprofiler-sdk/`, and every place looked at.
fn find_include_dir() -> Result<PathBuf, Vec<PathBuf>> {
    let mut tried = Vec::new();
    let mut candidates = Vec::new();
    if let Some(d) = std::env::var_os(ENV_INCLUDE).filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(d));
    }
    if let Some(r) = std::env::var_os(ENV_ROCM).filter(|v| !v.is_empty()) {
        candidates.push(Path::new(&r).join("include"));
    }
    candidates.push(Path::new(DEFAULT_ROCM).join("include"));
    for dir in candidates {
        if dir.join("rocprofiler-sdk/fwd.h").is_file() {
            return Ok(dir);
        }
        tried.push(dir);
    }
    Err(tried)
}

/// Our type, the header's type, whether sizes must match exactly (false: ours is a prefix
/// of theirs), and (our field, their field) pairs.
type Check = (
    &'static str,
    &'static str,
    bool,
    &'static [(&'static str, &'static str)],
);

const CHECKS: &[Check] = &[
    (
        "ClientId",
        "rocprofiler_client_id_t",
        true,
        &[("size", "size"), ("name", "name"), ("handle", "handle")],
    ),
    (
        "ToolConfigureResult",
        "rocprofiler_tool_configure_result_t",
        true,
        &[
            ("size", "size"),
            ("initialize", "initialize"),
            ("finalize", "finalize"),
            ("tool_data", "tool_data"),
        ],
    ),
    (
        "VersionTriplet",
        "rocprofiler_version_triplet_t",
        true,
        &[("major", "major"), ("minor", "minor"), ("patch", "patch")],
    ),
    (
        "ContextId",
        "rocprofiler_context_id_t",
        true,
        &[("handle", "handle")],
    ),
    (
        "AgentId",
        "rocprofiler_agent_id_t",
        true,
        &[("handle", "handle")],
    ),
    (
        "QueueId",
        "rocprofiler_queue_id_t",
        true,
        &[("handle", "handle")],
    ),
    ("UserData", "rocprofiler_user_data_t", true, &[]),
    (
        "CorrelationId",
        "rocprofiler_correlation_id_t",
        true,
        &[
            ("internal", "internal"),
            ("external", "external"),
            ("ancestor", "ancestor"),
        ],
    ),
    (
        "AsyncCorrelationId",
        "rocprofiler_async_correlation_id_t",
        true,
        &[("internal", "internal"), ("external", "external")],
    ),
    (
        "Dim3",
        "rocprofiler_dim3_t",
        true,
        &[("x", "x"), ("y", "y"), ("z", "z")],
    ),
    (
        "CallbackTracingRecord",
        "rocprofiler_callback_tracing_record_t",
        true,
        &[
            ("context_id", "context_id"),
            ("thread_id", "thread_id"),
            ("correlation_id", "correlation_id"),
            ("kind", "kind"),
            ("operation", "operation"),
            ("phase", "phase"),
            ("payload", "payload"),
        ],
    ),
    (
        "KernelDispatchInfo",
        "rocprofiler_kernel_dispatch_info_t",
        true,
        &[
            ("size", "size"),
            ("agent_id", "agent_id"),
            ("queue_id", "queue_id"),
            ("kernel_id", "kernel_id"),
            ("dispatch_id", "dispatch_id"),
            ("private_segment_size", "private_segment_size"),
            ("group_segment_size", "group_segment_size"),
            ("workgroup_size", "workgroup_size"),
            ("grid_size", "grid_size"),
        ],
    ),
    // Newer headers append `pipe_id` (160 B): ours is the 152-byte prefix.
    (
        "KernelDispatchData",
        "rocprofiler_callback_tracing_kernel_dispatch_data_t",
        false,
        &[
            ("size", "size"),
            ("start_timestamp", "start_timestamp"),
            ("end_timestamp", "end_timestamp"),
            ("dispatch_info", "dispatch_info"),
        ],
    ),
    (
        "MemoryAllocationData",
        "rocprofiler_callback_tracing_memory_allocation_data_t",
        true,
        &[
            ("size", "size"),
            ("start_timestamp", "start_timestamp"),
            ("end_timestamp", "end_timestamp"),
            ("agent_id", "agent_id"),
            ("address", "address"),
            ("allocation_size", "allocation_size"),
        ],
    ),
    (
        "CodeObjectLoadData",
        "rocprofiler_callback_tracing_code_object_load_data_t",
        true,
        &[
            ("size", "size"),
            ("code_object_id", "code_object_id"),
            ("uri", "uri"),
            ("load_base", "load_base"),
            ("load_size", "load_size"),
            ("load_delta", "load_delta"),
            ("storage_type", "storage_type"),
        ],
    ),
    (
        "KernelSymbolData",
        "rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t",
        true,
        &[
            ("size", "size"),
            ("kernel_id", "kernel_id"),
            ("code_object_id", "code_object_id"),
            ("kernel_name", "kernel_name"),
            ("kernel_object", "kernel_object"),
            ("kernarg_segment_size", "kernarg_segment_size"),
            ("kernarg_segment_alignment", "kernarg_segment_alignment"),
            ("group_segment_size", "group_segment_size"),
            ("private_segment_size", "private_segment_size"),
            ("sgpr_count", "sgpr_count"),
            ("arch_vgpr_count", "arch_vgpr_count"),
            ("accum_vgpr_count", "accum_vgpr_count"),
            (
                "kernel_code_entry_byte_offset",
                "kernel_code_entry_byte_offset",
            ),
            ("kernel_address", "kernel_address"),
        ],
    ),
    (
        "RecordHeader",
        "rocprofiler_record_header_t",
        true,
        &[("payload", "payload")],
    ),
    // Newer headers append `pipe_id` (192 B): ours is the 184-byte prefix.
    (
        "BufferKernelDispatchRecord",
        "rocprofiler_buffer_tracing_kernel_dispatch_record_t",
        false,
        &[
            ("size", "size"),
            ("kind", "kind"),
            ("operation", "operation"),
            ("correlation_id", "correlation_id"),
            ("thread_id", "thread_id"),
            ("start_timestamp", "start_timestamp"),
            ("end_timestamp", "end_timestamp"),
            ("dispatch_info", "dispatch_info"),
        ],
    ),
];

/// The dispatch counting service's types (`fwd.h`, `counters.h`,
/// `dispatch_counting_service.h`). The info's two one-bit flags are one byte at offset 40
/// in ours; bindgen names that byte differently, so only its size is compared.
const COUNTING_CHECKS: &[Check] = &[
    (
        "CounterId",
        "rocprofiler_counter_id_t",
        true,
        &[("handle", "handle")],
    ),
    (
        "CounterConfigId",
        "rocprofiler_counter_config_id_t",
        true,
        &[("handle", "handle")],
    ),
    (
        "CounterRecord",
        "rocprofiler_counter_record_t",
        true,
        &[
            ("id", "id"),
            ("counter_value", "counter_value"),
            ("dispatch_id", "dispatch_id"),
            ("user_data", "user_data"),
            ("agent_id", "agent_id"),
        ],
    ),
    (
        "CounterInfoV0",
        "rocprofiler_counter_info_v0_t",
        true,
        &[
            ("id", "id"),
            ("name", "name"),
            ("description", "description"),
            ("block", "block"),
            ("expression", "expression"),
        ],
    ),
    (
        "DispatchCountingServiceData",
        "rocprofiler_dispatch_counting_service_data_t",
        true,
        &[
            ("size", "size"),
            ("correlation_id", "correlation_id"),
            ("start_timestamp", "start_timestamp"),
            ("end_timestamp", "end_timestamp"),
            ("dispatch_info", "dispatch_info"),
        ],
    ),
];

/// Newer headers append `int32_t pipe_id` to the kernel-dispatch records: where the header
/// has it, our `*Pipe` form must match it exactly (size and the field's offset).
const PIPE_ID_CHECKS: &[(&str, &str)] = &[
    (
        "KernelDispatchDataPipe",
        "rocprofiler_callback_tracing_kernel_dispatch_data_t",
    ),
    (
        "BufferKernelDispatchRecordPipe",
        "rocprofiler_buffer_tracing_kernel_dispatch_record_t",
    ),
];

/// Assertions for the records that may end in `pipe_id`, and whether the header has it.
fn pipe_id_assertions(bindings: &str) -> String {
    let mut out = String::new();
    let mut with_pipe = Vec::new();
    for (ours, theirs) in PIPE_ID_CHECKS {
        let has = struct_fields(bindings, theirs).is_some_and(|f| f.iter().any(|n| n == "pipe_id"));
        if !has {
            println!(
                "cargo::warning={theirs} has no pipe_id (an older header); {ours} not checked"
            );
            continue;
        }
        with_pipe.push(*theirs);
        writeln!(
            out,
            "const _: () = assert!(size_of::<crate::{ours}>() == size_of::<sys::{theirs}>(), \
             \"size of {ours} differs from {theirs}\");\n\
             const _: () = assert!(offset_of!(crate::{ours}, pipe_id) == \
             offset_of!(sys::{theirs}, pipe_id), \"offset of {ours}.pipe_id differs\");"
        )
        .unwrap();
    }
    writeln!(
        out,
        "/// Whether the installed headers' kernel-dispatch callback data ends in `pipe_id`.\n\
         pub const HEADER_DISPATCH_PIPE_ID: bool = {};",
        with_pipe.contains(&"rocprofiler_callback_tracing_kernel_dispatch_data_t")
    )
    .unwrap();
    out
}

const REPLAY_STRUCT: &str = "rocprofiler_callback_tracing_kernel_replay_data_t";
/// Payload roles (names of `FieldOffsets` members) and the header names seen for each.
const REPLAY_ROLES: &[(&str, &[&str])] = &[
    ("current_pass", &["current_pass"]),
    ("total_passes", &["total_passes"]),
    ("pass_count", &["replay_pass_count", "pass_count_cb"]),
    ("continue_cb", &["replay_continue", "replay_continue_cb"]),
    (
        "start_context",
        &[
            "replay_start_context",
            "replay_local_enable_context_cb",
            "replay_local_start_context_cb",
        ],
    ),
    (
        "stop_context",
        &[
            "replay_stop_context",
            "replay_local_disable_context_cb",
            "replay_local_stop_context_cb",
        ],
    ),
];

fn assertions(bindings: &str) -> String {
    let mut out = String::from(
        "// Generated by krphase-ffi's build.rs from the installed SDK headers.\n\
         use core::mem::{offset_of, size_of};\n\n",
    );
    for (ours, theirs, exact, fields) in CHECKS.iter().chain(COUNTING_CHECKS) {
        let Some(present) = struct_fields(bindings, theirs) else {
            println!("cargo::warning=header has no struct {theirs}; {ours} not checked");
            continue;
        };
        let op = if *exact { "==" } else { "<=" };
        writeln!(
            out,
            "const _: () = assert!(size_of::<crate::{ours}>() {op} size_of::<sys::{theirs}>(), \
             \"size of {ours} differs from {theirs}\");"
        )
        .unwrap();
        for (our_field, their_field) in *fields {
            if !present.iter().any(|f| f == their_field) {
                println!("cargo::warning={theirs} has no field {their_field}; not checked");
                continue;
            }
            writeln!(
                out,
                "const _: () = assert!(offset_of!(crate::{ours}, {our_field}) == \
                 offset_of!(sys::{theirs}, {their_field}), \"offset of {ours}.{our_field} differs\");"
            )
            .unwrap();
        }
    }
    out.push_str(&pipe_id_assertions(bindings));
    out.push_str(&replay_assertions(bindings));
    out
}

/// Which payload layout the header declares, with the offsets of each role asserted
/// against `PayloadLayout::offsets()`.
fn replay_assertions(bindings: &str) -> String {
    let Some(fields) = struct_fields(bindings, REPLAY_STRUCT) else {
        println!("cargo::warning=header has no {REPLAY_STRUCT}: this SDK has no kernel replay");
        return "/// The payload layout of the installed headers (none: no kernel replay).\n\
                pub const HEADER_PAYLOAD_LAYOUT: Option<crate::PayloadLayout> = None;\n"
            .to_string();
    };
    let pos = |role: &str| {
        let names = REPLAY_ROLES.iter().find(|(r, _)| *r == role).unwrap().1;
        fields
            .iter()
            .position(|f| names.contains(&f.as_str()))
            .map(|i| (i, fields[i].clone()))
    };
    let (Some((cur, _)), Some((pc, _))) = (pos("current_pass"), pos("pass_count")) else {
        fail(&format!(
            "{REPLAY_STRUCT} in the installed headers has an unknown field set {fields:?}; \
             update REPLAY_ROLES in ffi/build/sdk_headers.rs"
        ));
    };
    let layout = if cur < pc { "B" } else { "A" };
    let mut out = format!(
        "/// The payload layout of the installed headers.\n\
         pub const HEADER_PAYLOAD_LAYOUT: Option<crate::PayloadLayout> = \
         Some(crate::PayloadLayout::{layout});\n\
         const _: () = assert!(offset_of!(sys::{REPLAY_STRUCT}, dispatch_info) == 8);\n\
         const _: () = assert!(size_of::<sys::{REPLAY_STRUCT}>() >= 168);\n"
    );
    for (role, _) in REPLAY_ROLES {
        match pos(role) {
            Some((_, name)) => writeln!(
                out,
                "const _: () = assert!(offset_of!(sys::{REPLAY_STRUCT}, {name}) == \
                 crate::PayloadLayout::{layout}.offsets().{role}, \"replay payload {role}\");"
            )
            .unwrap(),
            None => {
                println!("cargo::warning={REPLAY_STRUCT} has no {role} field (168-byte layout?)")
            }
        }
    }
    out
}

/// Checks our SDK declarations against the headers found; returns their include directory.
pub fn run() -> PathBuf {
    for v in [
        ENV_INCLUDE,
        ENV_ROCM,
        "LIBCLANG_PATH",
        "BINDGEN_EXTRA_CLANG_ARGS",
    ] {
        println!("cargo::rerun-if-env-changed={v}");
    }
    let include = match find_include_dir() {
        Ok(d) => d,
        Err(tried) => {
            let tried: Vec<_> = tried.iter().map(|p| p.display().to_string()).collect();
            fail(&format!(
                "feature `bindgen`: rocprofiler-sdk headers not found (no rocprofiler-sdk/fwd.h under {}); \
                 set {ENV_INCLUDE} to the directory that contains rocprofiler-sdk/",
                tried.join(", ")
            ));
        }
    };
    let sdk = include.join("rocprofiler-sdk");
    let mut wrapper = String::new();
    for h in [
        "fwd.h",
        "registration.h",
        "callback_tracing.h",
        "buffer_tracing.h",
        "counters.h",
        "dispatch_counting_service.h",
        "experimental/kernel_replay.h",
    ] {
        let p = sdk.join(h);
        if p.is_file() {
            println!("cargo::rerun-if-changed={}", p.display());
            writeln!(wrapper, "#include <rocprofiler-sdk/{h}>").unwrap();
        }
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let generated = std::panic::catch_unwind(|| {
        bindgen::Builder::default()
            .header_contents("krphase_sdk_wrapper.h", &wrapper)
            .clang_arg(format!("-I{}", include.display()))
            .clang_arg("-D__HIP_PLATFORM_AMD__=1")
            .allowlist_type("rocprofiler_.*")
            .allowlist_type("hsa_amd_pointer_info_t")
            .layout_tests(false)
            .generate()
    });
    let bindings = match generated {
        Ok(Ok(b)) => b.to_string(),
        Ok(Err(e)) => fail(&format!(
            "feature `bindgen`: cannot parse the headers in {}: {}",
            include.display(),
            e.to_string().replace('\n', " ")
        )),
        Err(_) => {
            fail("feature `bindgen`: libclang not found; install libclang or set LIBCLANG_PATH")
        }
    };
    std::fs::write(out_dir.join("rocprofiler_sys.rs"), &bindings).expect("write bindings");
    std::fs::write(out_dir.join("layout_asserts.rs"), assertions(&bindings))
        .expect("write asserts");
    include
}
