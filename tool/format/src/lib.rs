//! The .krp phase-file format (filled by the tool issue).
