//! What a workload's host program hands to the result line: its checksum and counter.

use krphase_kernels::checksum::Checksum;

pub struct Outcome {
    pub checksum: Checksum,
    pub counter: u64,
}
