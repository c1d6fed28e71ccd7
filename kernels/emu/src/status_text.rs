//! What `rocprofiler_get_status_string` returns: the SDK's message for a status (its
//! `rocprofiler_get_status_name` is the enum name). The messages are the SDK's own for every
//! status the emulator can return; for the others, which it never returns, the enum name stands
//! in.

use krphase_ffi::Status;
use std::ffi::CString;
use std::sync::LazyLock;

/// The SDK's message for the statuses the emulator returns, by number.
const MESSAGES: &[(u32, &str)] = &[
    (0, "Success"),
    (1, "General error"),
    (2, "Context ID not found"),
    (3, "Buffer ID not found"),
    (4, "Kind ID not found"),
    (5, "Operation ID not found"),
    (6, "Thread ID not found"),
    (7, "Agent ID not found"),
    (8, "HW counter not found"),
    (9, "General context error"),
    (10, "Context configuration is not valid"),
    (12, "Context has a conflict with another context"),
    (13, "Context ID should be initialized to zero"),
    (
        15,
        "Service configuration request would overwrite existing service configuration values",
    ),
    (
        16,
        "Configuration request occurred outside of valid rocprofiler configuration period",
    ),
    (17, "API function is defined but not implemented"),
    (
        18,
        "Data structure provided by user has a incompatible binary interface with this version of rocprofiler",
    ),
    (19, "Function invoked with one or more invalid arguments"),
    (21, "Invalid request because rocprofiler has finalized"),
    (30, "Could not find counter profile"),
    (
        36,
        "Counter profile agent does not match the agent in the context",
    ),
    (
        37,
        "The service is not available. Please refer to API functions that return this status code for more information.",
    ),
];

/// Number of statuses (`ROCPROFILER_STATUS_LAST`).
const LAST: u32 = 42;

static STRINGS: LazyLock<Vec<CString>> = LazyLock::new(|| {
    (0..LAST)
        .map(|n| {
            let text = MESSAGES
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, m)| (*m).to_string())
                .unwrap_or_else(|| {
                    format!(
                        "ROCPROFILER_STATUS_{}",
                        Status(n).name().unwrap_or("UNKNOWN")
                    )
                });
            CString::new(text).expect("no NUL")
        })
        .collect()
});

/// The message for `status`, or `None` past the last status (the SDK returns NULL there).
pub fn message(status: u32) -> Option<&'static CString> {
    STRINGS.get(status as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_not_names() {
        assert_eq!(message(4).unwrap().to_str().unwrap(), "Kind ID not found");
        assert_eq!(message(0).unwrap().to_str().unwrap(), "Success");
        assert!(message(42).is_none());
        for (n, _) in MESSAGES {
            assert!(
                !message(*n)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("ROCPROFILER_STATUS_")
            );
        }
    }
}
