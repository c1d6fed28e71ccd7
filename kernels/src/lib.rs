//! Workloads (filled by the emulator issue).
