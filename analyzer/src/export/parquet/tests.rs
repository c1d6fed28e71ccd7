//! The dataset read back with the parquet crate's Arrow reader.
