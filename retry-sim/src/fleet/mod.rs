//! The fleet as the simulator sees it: processes (each with its own scope, the simulator's
//! clients), a store a round trip away with its faults on the timeline, and, in fleet mode,
//! each process's sync task, all in virtual time.
//!
//! Three arms are compared side by side ([`arm::Arm`]): each process alone (today's
//! strategies), a naive shared store asked on every request, and fleet mode. The store runs
//! `retry-core`'s own store step (`retry_core::fleet::store_model::step`, the Rust twin of the
//! Redis script, proven identical by a differential test); fleet mode's processes run
//! `retry-core`'s own process side.

pub mod arm;
pub mod feasible;
pub mod frontier;
pub mod onset;
pub mod process;
pub mod recovery;
pub mod scenarios;
pub mod shape;
pub mod static_split;
pub mod store;
pub mod store_fault;
pub mod store_trace;
pub mod sweep;
pub mod sync;
