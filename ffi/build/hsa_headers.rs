//! The HSA header check: finds the installed HSA headers (`hsa/hsa.h`, `hsa/hsa_ext_amd.h`,
//! `hsa/hsa_ven_amd_loader.h`; Debian's `libhsa-runtime-dev` puts them in /usr/include), generates
//! bindings from them, and writes compile-time assertions that ffi's HSA declarations match: the
//! loader's extension tables, the handle types, the shared prefix of `hsa_amd_pointer_info_t`,
//! and every enum value krphase passes or compares. Without headers nothing is compared, which
//! `HEADER_HSA_INCLUDE` says (None).

use crate::shared::{DEFAULT_ROCM, ENV_ROCM, fail, has_const, struct_fields};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ENV_INCLUDE: &str = "KRPHASE_HSA_INCLUDE_DIR";
const SYSTEM_INCLUDE: &str = "/usr/include";
const HEADERS: [&str; 3] = ["hsa.h", "hsa_ext_amd.h", "hsa_ven_amd_loader.h"];

/// How the size of ours relates to theirs.
#[derive(Clone, Copy)]
enum Size {
    /// Equal.
    Same,
    /// Ours has members theirs lacks, at the end (a newer struct, or a newer table version).
    OursExtends,
}

/// Our type (a path under `crate::`), the header's type, the size relation, and (our field,
/// their field) pairs; a pair whose field the header lacks is skipped with a warning.
type Check = (
    &'static str,
    &'static str,
    Size,
    &'static [(&'static str, &'static str)],
);

const LOADER_FIELDS: &[(&str, &str)] = &[
    (
        "query_host_address",
        "hsa_ven_amd_loader_query_host_address",
    ),
    (
        "query_segment_descriptors",
        "hsa_ven_amd_loader_query_segment_descriptors",
    ),
    ("query_executable", "hsa_ven_amd_loader_query_executable"),
    (
        "executable_iterate_loaded_code_objects",
        "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
    ),
    (
        "loaded_code_object_get_info",
        "hsa_ven_amd_loader_loaded_code_object_get_info",
    ),
    (
        "code_object_reader_create_from_file_with_offset_size",
        "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
    ),
    (
        "iterate_executables",
        "hsa_ven_amd_loader_iterate_executables",
    ),
];

const HANDLE: &[(&str, &str)] = &[("handle", "handle")];
const LOADER_1_03: &str = "hsa_loader::HsaVenAmdLoader1_03";

/// Each older table is compared with ours as its prefix, field by field.
const CHECKS: &[Check] = &[
    (
        LOADER_1_03,
        "hsa_ven_amd_loader_1_03_pfn_t",
        Size::Same,
        LOADER_FIELDS,
    ),
    (
        LOADER_1_03,
        "hsa_ven_amd_loader_1_02_pfn_t",
        Size::OursExtends,
        LOADER_FIELDS,
    ),
    (
        LOADER_1_03,
        "hsa_ven_amd_loader_1_01_pfn_t",
        Size::OursExtends,
        LOADER_FIELDS,
    ),
    (
        LOADER_1_03,
        "hsa_ven_amd_loader_1_00_pfn_t",
        Size::OursExtends,
        LOADER_FIELDS,
    ),
    ("HsaAgent", "hsa_agent_t", Size::Same, HANDLE),
    ("HsaExecutable", "hsa_executable_t", Size::Same, HANDLE),
    (
        "HsaExecutableSymbol",
        "hsa_executable_symbol_t",
        Size::Same,
        HANDLE,
    ),
    (
        "hsa_loader::HsaLoadedCodeObject",
        "hsa_loaded_code_object_t",
        Size::Same,
        HANDLE,
    ),
    (
        "hsa_loader::HsaCodeObjectReader",
        "hsa_code_object_reader_t",
        Size::Same,
        HANDLE,
    ),
    // ROCr 5.2.3's struct ends at `global_flags`; newer ones append `registered`, which ours has.
    (
        "HsaAmdPointerInfo",
        "hsa_amd_pointer_info_t",
        Size::OursExtends,
        &[
            ("size", "size"),
            ("type_", "type_"),
            ("agent_base_address", "agentBaseAddress"),
            ("host_base_address", "hostBaseAddress"),
            ("size_in_bytes", "sizeInBytes"),
            ("user_data", "userData"),
            ("agent_owner", "agentOwner"),
            ("global_flags", "global_flags"),
            ("registered", "registered"),
        ],
    ),
];

/// `LOADER_TABLE_SIZES` entries (minor version) and the header's table of that version.
const TABLE_SIZES: &[(usize, &str)] = &[
    (0, "hsa_ven_amd_loader_1_00_pfn_t"),
    (1, "hsa_ven_amd_loader_1_01_pfn_t"),
    (2, "hsa_ven_amd_loader_1_02_pfn_t"),
    (3, "hsa_ven_amd_loader_1_03_pfn_t"),
];

/// Our constant (a path under `crate::`) and the header's enum value of the same meaning; a value
/// the header lacks (newer ROCr) is skipped with a warning.
const CONSTS: &[(&str, &str)] = &[
    ("hsa_symbol_info::TYPE", "HSA_EXECUTABLE_SYMBOL_INFO_TYPE"),
    (
        "hsa_symbol_info::NAME_LENGTH",
        "HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH",
    ),
    ("hsa_symbol_info::NAME", "HSA_EXECUTABLE_SYMBOL_INFO_NAME"),
    (
        "hsa_symbol_info::VARIABLE_SIZE",
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE",
    ),
    (
        "hsa_symbol_info::VARIABLE_IS_CONST",
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST",
    ),
    ("hsa_symbol_info::AGENT", "HSA_EXECUTABLE_SYMBOL_INFO_AGENT"),
    (
        "hsa_symbol_info::VARIABLE_ADDRESS",
        "HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS",
    ),
    ("hsa_symbol_kind::VARIABLE", "HSA_SYMBOL_KIND_VARIABLE"),
    ("hsa_symbol_kind::KERNEL", "HSA_SYMBOL_KIND_KERNEL"),
    (
        "hsa_symbol_kind::INDIRECT_FUNCTION",
        "HSA_SYMBOL_KIND_INDIRECT_FUNCTION",
    ),
    ("HSA_STATUS_SUCCESS", "HSA_STATUS_SUCCESS"),
    ("HSA_STATUS_INFO_BREAK", "HSA_STATUS_INFO_BREAK"),
    ("hsa_loader::HSA_STATUS_ERROR", "HSA_STATUS_ERROR"),
    (
        "hsa_loader::HSA_STATUS_ERROR_INVALID_ARGUMENT",
        "HSA_STATUS_ERROR_INVALID_ARGUMENT",
    ),
    (
        "hsa_loader::HSA_STATUS_ERROR_NOT_INITIALIZED",
        "HSA_STATUS_ERROR_NOT_INITIALIZED",
    ),
    (
        "hsa_loader::HSA_EXTENSION_AMD_LOADER",
        "HSA_EXTENSION_AMD_LOADER",
    ),
    ("hsa_pointer_type::UNKNOWN", "HSA_EXT_POINTER_TYPE_UNKNOWN"),
    ("hsa_pointer_type::HSA", "HSA_EXT_POINTER_TYPE_HSA"),
    ("hsa_pointer_type::LOCKED", "HSA_EXT_POINTER_TYPE_LOCKED"),
    (
        "hsa_pointer_type::GRAPHICS",
        "HSA_EXT_POINTER_TYPE_GRAPHICS",
    ),
    ("hsa_pointer_type::IPC", "HSA_EXT_POINTER_TYPE_IPC"),
    (
        "hsa_pointer_type::RESERVED_ADDR",
        "HSA_EXT_POINTER_TYPE_RESERVED_ADDR",
    ),
    (
        "hsa_pointer_type::HSA_VMEM",
        "HSA_EXT_POINTER_TYPE_HSA_VMEM",
    ),
    ("hsa_global_flag::KERNARG", "HSA_REGION_GLOBAL_FLAG_KERNARG"),
    (
        "hsa_global_flag::FINE_GRAINED",
        "HSA_REGION_GLOBAL_FLAG_FINE_GRAINED",
    ),
    (
        "hsa_global_flag::COARSE_GRAINED",
        "HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED",
    ),
    (
        "hsa_global_flag::EXTENDED_SCOPE_FINE_GRAINED",
        "HSA_REGION_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED",
    ),
];

/// The include directory holding `hsa/hsa.h`: `$KRPHASE_HSA_INCLUDE_DIR` (which must have it),
/// else the SDK's include directory, `$ROCM_PATH/include`, /opt/rocm/include, /usr/include.
fn find_include_dir(sdk_include: &Path) -> Option<PathBuf> {
    let has = |d: &Path| d.join("hsa/hsa.h").is_file();
    if let Some(d) = std::env::var_os(ENV_INCLUDE).filter(|v| !v.is_empty()) {
        let d = PathBuf::from(d);
        if !has(&d) {
            fail(&format!(
                "feature `bindgen`: {ENV_INCLUDE}={} has no hsa/hsa.h",
                d.display()
            ));
        }
        return Some(d);
    }
    let mut candidates = vec![sdk_include.to_path_buf()];
    if let Some(r) = std::env::var_os(ENV_ROCM).filter(|v| !v.is_empty()) {
        candidates.push(Path::new(&r).join("include"));
    }
    candidates.push(Path::new(DEFAULT_ROCM).join("include"));
    candidates.push(PathBuf::from(SYSTEM_INCLUDE));
    candidates.into_iter().find(|d| has(d))
}

/// The assertions for one struct check, and whether the header had the struct.
fn struct_assertions(
    bindings: &str,
    (ours, theirs, size, fields): &Check,
    out: &mut String,
) -> bool {
    let Some(present) = struct_fields(bindings, theirs) else {
        println!("cargo::warning=HSA headers have no {theirs}; {ours} not checked against it");
        return false;
    };
    let op = match size {
        Size::Same => "==",
        Size::OursExtends => ">=",
    };
    writeln!(
        out,
        "const _: () = assert!(size_of::<crate::{ours}>() {op} size_of::<hsa_sys::{theirs}>(), \
         \"size of {ours} against {theirs}\");"
    )
    .unwrap();
    for (our_field, their_field) in *fields {
        if !present.iter().any(|f| f == their_field) {
            if matches!(size, Size::Same) || !theirs.starts_with("hsa_ven_amd_loader_") {
                println!("cargo::warning={theirs} has no field {their_field}; not checked");
            }
            continue;
        }
        writeln!(
            out,
            "const _: () = assert!(offset_of!(crate::{ours}, {our_field}) == \
             offset_of!(hsa_sys::{theirs}, {their_field}), \
             \"offset of {ours}.{our_field} against {theirs}\");"
        )
        .unwrap();
    }
    true
}

/// Every assertion, and the list of what was compared.
fn assertions(bindings: &str, include: &Path) -> String {
    // Included beside the SDK's assertions, which import `offset_of` and `size_of` already.
    let mut out = String::from(
        "// Generated by krphase-ffi's build script from the installed HSA headers.\n",
    );
    let mut checked: Vec<String> = Vec::new();
    for c in CHECKS {
        if struct_assertions(bindings, c, &mut out) {
            checked.push(c.1.to_string());
        }
    }
    for (minor, theirs) in TABLE_SIZES {
        if struct_fields(bindings, theirs).is_some() {
            writeln!(
                out,
                "const _: () = assert!(crate::hsa_loader::LOADER_TABLE_SIZES[{minor}].1 == \
                 size_of::<hsa_sys::{theirs}>(), \"LOADER_TABLE_SIZES[{minor}] against {theirs}\");"
            )
            .unwrap();
        }
    }
    for (ours, theirs) in CONSTS {
        if !has_const(bindings, theirs) {
            println!("cargo::warning=HSA headers have no {theirs}; {ours} not checked");
            continue;
        }
        writeln!(
            out,
            "const _: () = assert!(crate::{ours} as u64 == hsa_sys::{theirs} as u64, \
             \"{ours} against {theirs}\");"
        )
        .unwrap();
        checked.push((*theirs).to_string());
    }
    writeln!(
        out,
        "/// The include directory the HSA headers were read from.\n\
         pub const HEADER_HSA_INCLUDE: Option<&str> = Some({:?});\n\
         /// The header types and values ffi's declarations were compared with.\n\
         pub const HEADER_HSA_CHECKED: &[&str] = &{checked:?};",
        include.display().to_string()
    )
    .unwrap();
    out
}

/// Nothing to compare: no HSA headers.
const NONE_FOUND: &str = "/// No HSA headers were found: nothing was compared.\n\
     pub const HEADER_HSA_INCLUDE: Option<&str> = None;\n\
     /// The header types and values ffi's declarations were compared with.\n\
     pub const HEADER_HSA_CHECKED: &[&str] = &[];\n";

fn generate(include: &Path) -> String {
    let mut wrapper = String::new();
    for h in HEADERS {
        let p = include.join("hsa").join(h);
        println!("cargo::rerun-if-changed={}", p.display());
        writeln!(wrapper, "#include <hsa/{h}>").unwrap();
    }
    let generated = std::panic::catch_unwind(|| {
        bindgen::Builder::default()
            .header_contents("krphase_hsa_wrapper.h", &wrapper)
            .clang_arg(format!("-I{}", include.display()))
            .allowlist_type("hsa_ven_amd_loader_1_0[0-3]_pfn_t")
            .allowlist_type("hsa_amd_pointer_info_t")
            .allowlist_type("hsa_(agent|executable|executable_symbol|loaded_code_object)_t")
            .allowlist_type("hsa_code_object_reader_t")
            .allowlist_var("HSA_(EXECUTABLE_SYMBOL_INFO|SYMBOL_KIND|STATUS|EXTENSION)_.*")
            .allowlist_var("HSA_(EXT_POINTER_TYPE|REGION_GLOBAL_FLAG)_.*")
            .allowlist_type("hsa_(executable_symbol_info|symbol_kind|status|extension)_t")
            .allowlist_type("hsa_(amd_pointer_type|region_global_flag)_t")
            .prepend_enum_name(false)
            .layout_tests(false)
            .generate()
    });
    match generated {
        Ok(Ok(b)) => b.to_string(),
        Ok(Err(e)) => fail(&format!(
            "feature `bindgen`: cannot parse the HSA headers in {}: {}",
            include.display(),
            e.to_string().replace('\n', " ")
        )),
        Err(_) => {
            fail("feature `bindgen`: libclang not found; install libclang or set LIBCLANG_PATH")
        }
    }
}

/// Checks ffi's HSA declarations against the HSA headers found (`sdk_include` is one place
/// looked at); writes `hsa_sys.rs` and `hsa_asserts.rs` into `OUT_DIR`.
pub fn run(sdk_include: &Path) {
    println!("cargo::rerun-if-env-changed={ENV_INCLUDE}");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let (bindings, asserts) = match find_include_dir(sdk_include) {
        Some(include) => {
            let b = generate(&include);
            let a = assertions(&b, &include);
            (b, a)
        }
        None => {
            println!(
                "cargo::warning=no HSA headers (hsa/hsa.h) found; ffi's HSA types not checked \
                 (set {ENV_INCLUDE}, or install libhsa-runtime-dev)"
            );
            (String::new(), NONE_FOUND.to_string())
        }
    };
    std::fs::write(out_dir.join("hsa_sys.rs"), bindings).expect("write HSA bindings");
    std::fs::write(out_dir.join("hsa_asserts.rs"), asserts).expect("write HSA asserts");
}
