//! Emulated rocprofiler-sdk (filled by the emulator issue).
