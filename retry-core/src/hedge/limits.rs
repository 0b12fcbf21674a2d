//! How far a call's hedging goes.

/// The most hedges a call may send, 4: at most 5 copies of a request in flight. Source: gRPC's
/// hedging policy (gRFC A6), which treats a `maxAttempts` above 5 as 5, the first attempt
/// included. Beyond a few copies the tail gains nothing (Dean and Barroso, "The Tail at Scale",
/// CACM 2013: one hedge took BigTable's 99.9th percentile from 1,800 ms to 74 ms) and the load
/// multiplies.
pub const MAX_HEDGES: u32 = 4;
