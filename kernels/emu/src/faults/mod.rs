//! Workloads that put the tool through the faults of a real application's life: forking while
//! other threads dispatch (`fork`), thousands of short-lived dispatching threads (`churn`),
//! and a worker thread ending the process with `exit()` or `abort()` (`exit-worker`).

pub mod churn;
pub mod exit_worker;
pub mod fork;
