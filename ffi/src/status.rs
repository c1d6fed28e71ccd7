//! `rocprofiler_status_t` as a Rust error type.

use std::fmt;

/// A non-success `rocprofiler_status_t`. Displays as `ROCPROFILER_STATUS_<NAME> (<n>)`, or
/// `unknown status <n>` for numbers this crate does not know.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status(pub u32);

/// Every `rocprofiler_status_t` name (without its `ROCPROFILER_STATUS_` prefix), indexed by
/// number. 41 differs by branch (`FIRMWARE_INCOMPATIBLE` in some); we keep the mainline name.
const NAMES: [&str; 43] = [
    "SUCCESS",
    "ERROR",
    "ERROR_CONTEXT_NOT_FOUND",
    "ERROR_BUFFER_NOT_FOUND",
    "ERROR_KIND_NOT_FOUND",
    "ERROR_OPERATION_NOT_FOUND",
    "ERROR_THREAD_NOT_FOUND",
    "ERROR_AGENT_NOT_FOUND",
    "ERROR_COUNTER_NOT_FOUND",
    "ERROR_CONTEXT_ERROR",
    "ERROR_CONTEXT_INVALID",
    "ERROR_CONTEXT_NOT_STARTED",
    "ERROR_CONTEXT_CONFLICT",
    "ERROR_CONTEXT_ID_NOT_ZERO",
    "ERROR_BUFFER_BUSY",
    "ERROR_SERVICE_ALREADY_CONFIGURED",
    "ERROR_CONFIGURATION_LOCKED",
    "ERROR_NOT_IMPLEMENTED",
    "ERROR_INCOMPATIBLE_ABI",
    "ERROR_INVALID_ARGUMENT",
    "ERROR_METRIC_NOT_VALID_FOR_AGENT",
    "ERROR_FINALIZED",
    "ERROR_HSA_NOT_LOADED",
    "ERROR_DIM_NOT_FOUND",
    "ERROR_PROFILE_COUNTER_NOT_FOUND",
    "ERROR_AST_GENERATION_FAILED",
    "ERROR_AST_NOT_FOUND",
    "ERROR_AQL_NO_EVENT_COORD",
    "ERROR_INCOMPATIBLE_KERNEL",
    "ERROR_OUT_OF_RESOURCES",
    "ERROR_CONFIG_NOT_FOUND",
    "ERROR_AGENT_DISPATCH_CONFLICT",
    "INTERNAL_NO_AGENT_CONTEXT",
    "ERROR_SAMPLE_RATE_EXCEEDED",
    "ERROR_NO_PROFILE_QUEUE",
    "ERROR_NO_HARDWARE_COUNTERS",
    "ERROR_AGENT_MISMATCH",
    "ERROR_NOT_AVAILABLE",
    "ERROR_EXCEEDS_HW_LIMIT",
    "ERROR_AGENT_ARCH_NOT_SUPPORTED",
    "ERROR_PERMISSION_DENIED",
    "ERROR_INCOMPATIBLE_REGISTER_VERSION",
    "LAST",
];

/// The statuses krphase reacts to by number (names and numbers as in `rocprofiler-sdk/fwd.h`).
#[allow(missing_docs)]
impl Status {
    /// The raw success value; never an `Err`.
    pub const SUCCESS: u32 = 0;
    pub const ERROR: Status = Status(1);
    pub const CONTEXT_NOT_FOUND: Status = Status(2);
    pub const BUFFER_NOT_FOUND: Status = Status(3);
    pub const KIND_NOT_FOUND: Status = Status(4);
    pub const OPERATION_NOT_FOUND: Status = Status(5);
    pub const THREAD_NOT_FOUND: Status = Status(6);
    pub const AGENT_NOT_FOUND: Status = Status(7);
    pub const COUNTER_NOT_FOUND: Status = Status(8);
    pub const CONTEXT_ERROR: Status = Status(9);
    pub const CONTEXT_ID_NOT_ZERO: Status = Status(13);
    pub const SERVICE_ALREADY_CONFIGURED: Status = Status(15);
    pub const CONFIGURATION_LOCKED: Status = Status(16);
    pub const NOT_IMPLEMENTED: Status = Status(17);
    pub const INCOMPATIBLE_ABI: Status = Status(18);
    pub const INVALID_ARGUMENT: Status = Status(19);
    pub const FINALIZED: Status = Status(21);
    pub const CONFIG_NOT_FOUND: Status = Status(30);
    pub const NOT_AVAILABLE: Status = Status(37);

    /// The name without the `ROCPROFILER_STATUS_` prefix, if known (LAST is not a status).
    pub fn name(self) -> Option<&'static str> {
        NAMES.get(self.0 as usize).copied().filter(|n| *n != "LAST")
    }

    /// Converts a raw return value: 0 is `Ok`, anything else the error.
    pub fn check(raw: u32) -> Result<(), Status> {
        if raw == Self::SUCCESS {
            Ok(())
        } else {
            Err(Status(raw))
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "ROCPROFILER_STATUS_{n} ({})", self.0),
            None => write!(f, "unknown status {}", self.0),
        }
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Status {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_name_and_number() {
        assert_eq!(
            Status(15).to_string(),
            "ROCPROFILER_STATUS_ERROR_SERVICE_ALREADY_CONFIGURED (15)"
        );
        assert_eq!(
            Status(9).to_string(),
            "ROCPROFILER_STATUS_ERROR_CONTEXT_ERROR (9)"
        );
        assert_eq!(Status(99).to_string(), "unknown status 99");
        assert_eq!(Status(42).to_string(), "unknown status 42");
    }

    #[test]
    fn every_reference_number_has_its_name() {
        // The SDK's status enum, number by number.
        let table = "SUCCESS ERROR ERROR_CONTEXT_NOT_FOUND ERROR_BUFFER_NOT_FOUND \
            ERROR_KIND_NOT_FOUND ERROR_OPERATION_NOT_FOUND ERROR_THREAD_NOT_FOUND \
            ERROR_AGENT_NOT_FOUND ERROR_COUNTER_NOT_FOUND ERROR_CONTEXT_ERROR \
            ERROR_CONTEXT_INVALID ERROR_CONTEXT_NOT_STARTED ERROR_CONTEXT_CONFLICT \
            ERROR_CONTEXT_ID_NOT_ZERO ERROR_BUFFER_BUSY ERROR_SERVICE_ALREADY_CONFIGURED \
            ERROR_CONFIGURATION_LOCKED ERROR_NOT_IMPLEMENTED ERROR_INCOMPATIBLE_ABI \
            ERROR_INVALID_ARGUMENT ERROR_METRIC_NOT_VALID_FOR_AGENT ERROR_FINALIZED \
            ERROR_HSA_NOT_LOADED ERROR_DIM_NOT_FOUND ERROR_PROFILE_COUNTER_NOT_FOUND \
            ERROR_AST_GENERATION_FAILED ERROR_AST_NOT_FOUND ERROR_AQL_NO_EVENT_COORD \
            ERROR_INCOMPATIBLE_KERNEL ERROR_OUT_OF_RESOURCES ERROR_CONFIG_NOT_FOUND \
            ERROR_AGENT_DISPATCH_CONFLICT INTERNAL_NO_AGENT_CONTEXT ERROR_SAMPLE_RATE_EXCEEDED \
            ERROR_NO_PROFILE_QUEUE ERROR_NO_HARDWARE_COUNTERS ERROR_AGENT_MISMATCH \
            ERROR_NOT_AVAILABLE ERROR_EXCEEDS_HW_LIMIT ERROR_AGENT_ARCH_NOT_SUPPORTED \
            ERROR_PERMISSION_DENIED ERROR_INCOMPATIBLE_REGISTER_VERSION";
        let names: Vec<&str> = table.split_whitespace().collect();
        assert_eq!(names.len(), 42);
        for (n, name) in names.iter().enumerate() {
            assert_eq!(Status(n as u32).name(), Some(*name), "status {n}");
            assert_eq!(
                Status(n as u32).to_string(),
                format!("ROCPROFILER_STATUS_{name} ({n})")
            );
        }
        assert_eq!(Status(42).name(), None, "LAST is not a status");
        let consts = [
            (Status::ERROR, 1),
            (Status::CONTEXT_NOT_FOUND, 2),
            (Status::KIND_NOT_FOUND, 4),
            (Status::OPERATION_NOT_FOUND, 5),
            (Status::AGENT_NOT_FOUND, 7),
            (Status::COUNTER_NOT_FOUND, 8),
            (Status::CONTEXT_ERROR, 9),
            (Status::CONTEXT_ID_NOT_ZERO, 13),
            (Status::SERVICE_ALREADY_CONFIGURED, 15),
            (Status::CONFIGURATION_LOCKED, 16),
            (Status::NOT_IMPLEMENTED, 17),
            (Status::INCOMPATIBLE_ABI, 18),
            (Status::INVALID_ARGUMENT, 19),
            (Status::FINALIZED, 21),
            (Status::CONFIG_NOT_FOUND, 30),
        ];
        for (s, n) in consts {
            assert_eq!(s.0, n);
        }
    }

    #[test]
    fn check_maps_zero_to_ok() {
        assert_eq!(Status::check(0), Ok(()));
        assert_eq!(Status::check(16), Err(Status::CONFIGURATION_LOCKED));
    }
}
