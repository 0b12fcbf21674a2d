//! The metrics' units and descriptions, given to the recorder with each scope's handles (a
//! Prometheus exporter shows them as `# HELP`, an OpenTelemetry one as the instrument's unit and
//! description).

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

use super::names::*;

/// Describes every metric to the recorder installed now (describing again is harmless).
pub(crate) fn describe() {
    describe_counter!(CALLS, Unit::Count, "Calls that ended, by scope and outcome");
    describe_counter!(
        ATTEMPTS,
        Unit::Count,
        "Attempts sent by the calls that ended"
    );
    describe_counter!(RETRIES, Unit::Count, "Retries granted, by scope and reason");
    describe_histogram!(
        ATTEMPTS_PER_CALL,
        Unit::Count,
        "Attempts sent per call that ended"
    );
    describe_histogram!(
        BACKOFF_DELAY,
        Unit::Seconds,
        "The backoff before each retry granted"
    );
    describe_histogram!(
        LIMITER_WAIT,
        Unit::Seconds,
        "How long an attempt waited for its send permit (adaptive mode)"
    );
    describe_gauge!(
        QUOTA_LEVEL,
        Unit::Count,
        "Tokens a retry would find in the retry quota (set when the scope is made, updated on the retry path)"
    );
    describe_gauge!(
        QUOTA_CAPACITY,
        Unit::Count,
        "The most tokens a retry may find in the retry quota (set when the scope is made, updated on the retry path)"
    );
    // Sends per second: no unit of the facade's names it without one in the name.
    describe_gauge!(
        LIMITER_RATE,
        "The adaptive rate limiter's send rate, in sends per second, once it is engaged (updated when it may change)"
    );
    describe_counter!(
        FLEET_SYNCS,
        Unit::Count,
        "A fleet scope's syncs with the fleet's store, by result"
    );
    describe_gauge!(
        FLEET_STATUS,
        "A fleet scope's status: 1 for the status in force, 0 for the others"
    );
    describe_gauge!(
        FLEET_LEASE_TOKENS,
        Unit::Count,
        "Tokens the fleet scope's last lease left the process"
    );
    describe_gauge!(
        FLEET_RATE,
        "The fleet's send rate at the last lease, in requests per second (0: not engaged)"
    );
    describe_gauge!(
        FLEET_SHARE,
        "This process's share of the fleet's send rate, in requests per second (0: not engaged)"
    );
    describe_gauge!(
        FLEET_PROCESSES,
        Unit::Count,
        "The processes the fleet's store counted as live at the last lease"
    );
    describe_counter!(
        FLEET_GARBAGE,
        Unit::Count,
        "A fleet scope's syncs whose store dropped garbage: a stored record or state no process could have written"
    );
}
