//! Kernel names the way rocprofv3 shows and filters them.
//!
//! The SDK's kernel-symbol record carries the ELF symbol of the kernel descriptor: mangled, with
//! `.kd` kept (`_ZN3krp5saxpyEPym.kd`). rocprofv3 formats it once per symbol
//! (`source/lib/rocprofiler-sdk-tool/config.cpp` `format_name`, rocprofiler-sdk @16d535ef; the
//! demangler and truncation in `source/lib/common/demangle.cpp` @2695e836):
//!
//! - by default, `(\.kd)$` stripped, then demangled (a name that does not demangle is kept as it
//!   is): `krp::saxpy(unsigned long long*, unsigned long)`;
//! - `--truncate-kernels`: demangled, then cut to the bare function name: `saxpy`;
//! - `--mangled-kernels` (without truncation): the raw name, `.kd` included.
//!
//! Its include and exclude regexes (`ROCPROF_KERNEL_FILTER_INCLUDE_REGEX` /
//! `_EXCLUDE_REGEX`) are `std::regex_search` (a search, not a full match; ECMAScript grammar) on
//! that formatted name, include first, then exclude (`tool.cpp` @4c852d53, kernel-symbol
//! registration). [`format`] and [`KernelFilter`] do the same.

mod demangle;
mod filter;
mod form;
mod truncate;

pub use demangle::demangle_symbol;
pub use filter::{KernelFilter, compile_pattern};
pub use form::{NameForm, format};
pub use truncate::truncate;
