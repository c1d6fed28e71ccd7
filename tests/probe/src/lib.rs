//! Conformance probe tool (filled by the emulator issue).
