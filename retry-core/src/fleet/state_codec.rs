//! The store's state as Redis holds it (the `state` hash, the `procs` hash, the `seen` sorted
//! set, all text) read back into a [`StoreState`], every value checked: for inspecting a
//! scope's fleet state, and for the differential test that compares it with the model's.

use std::collections::BTreeMap;

use super::error::ProtocolError;
use super::protocol::{ProcessId, Settings};
use super::store_state::{FleetState, ProcessRecord, StoreState};

/// The most any stored number may be in absolute value: 2^53, where Lua's numbers stop being
/// exact integers.
const MAX_STORED: i64 = 1 << 53;

/// Reads a scope's state from the `state` hash's fields, the `procs` hash's entries and the
/// `seen` sorted set's members with their scores. An empty `state` hash is no fleet (then
/// `procs` and `seen` must be empty too). Every number must be an integer within ±2^53, every
/// record `lease:owed:retry_demand:send_demand`, and `procs` and `seen` must name the same
/// processes.
pub(crate) fn decode_state(
    state: &[(String, String)],
    procs: &[(String, String)],
    seen: &[(String, String)],
) -> Result<StoreState, ProtocolError> {
    let fleet = if state.is_empty() {
        None
    } else {
        Some(decode_fleet(state)?)
    };
    let seen: BTreeMap<&str, &str> = seen.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    if fleet.is_none() && !(procs.is_empty() && seen.is_empty()) {
        return Err(ProtocolError::new(
            "procs",
            "records without a state",
            "empty when the state is",
        ));
    }
    if seen.len() != procs.len() {
        return Err(ProtocolError::new(
            "seen",
            seen.len(),
            &format!("one entry per record ({})", procs.len()),
        ));
    }
    let mut processes = BTreeMap::new();
    for (id, text) in procs {
        let seen_ms = seen
            .get(id.as_str())
            .ok_or_else(|| ProtocolError::new("seen", id, "an entry for every record"))?;
        let record = decode_record(text, stored_int("seen", seen_ms, 0, MAX_STORED)?)?;
        processes.insert(ProcessId::parse(id)?, record);
    }
    Ok(StoreState::from_parts(fleet, processes))
}

fn decode_fleet(fields: &[(String, String)]) -> Result<FleetState, ProtocolError> {
    let map: BTreeMap<&str, &str> = fields
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let int = |name: &'static str| -> Result<i64, ProtocolError> {
        let text = map
            .get(name)
            .ok_or_else(|| ProtocolError::new(name, "missing", "a stored integer"))?;
        stored_int(name, text, -MAX_STORED, MAX_STORED)
    };
    let rate = |name: &'static str| -> Result<Option<i64>, ProtocolError> {
        let value = int(name)?;
        Ok((value >= 0).then_some(value))
    };
    let flag = |name: &'static str| -> Result<bool, ProtocolError> {
        match int(name)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(ProtocolError::new(name, other, "0 or 1")),
        }
    };
    // A field an earlier script (the same protocol) did not write: 0.
    let optional = |name: &'static str| -> Result<i64, ProtocolError> {
        match map.get(name) {
            Some(text) => stored_int(name, text, -MAX_STORED, MAX_STORED),
            None => Ok(0),
        }
    };
    let settings = map
        .get("settings")
        .ok_or_else(|| ProtocolError::new("settings", "missing", "stored settings"))?;
    Ok(FleetState {
        settings: Settings::parse(settings)?,
        born_ms: int("born")?,
        now_ms: int("now")?,
        relearn_until_ms: int("relearn_until")?,
        pool: int("pool")?,
        leased: int("leased")?,
        retry_demand: int("retry_demand")?,
        send_demand: int("send_demand")?,
        departed_demand: optional("departed_demand")?,
        tick_start_ms: int("tick_start")?,
        tick_calls: int("tick_calls")?,
        tick_sends: int("tick_sends")?,
        tick_throttles: int("tick_throttles")?,
        tick_successes: optional("tick_successes")?,
        tick_reports: int("tick_reports")?,
        tick_demand: optional("tick_demand")?,
        tick_span: optional("tick_span")?,
        last_tick_sends: optional("last_sends")?,
        last_tick_throttles: optional("last_throttles")?,
        calls_rate: rate("calls_rate")?,
        send_rate: rate("send_rate")?,
        admitted_rate: rate("admitted_rate")?,
        calls_failing: match optional("calls_failing")? {
            0 => false,
            1 => true,
            other => return Err(ProtocolError::new("calls_failing", other, "0 or 1")),
        },
        engaged: flag("engaged")?,
        adopting: flag("adopting")?,
        w_max: int("w_max")?,
        cold_cut: flag("cold_cut")?,
        cut_at_ms: int("cut_at")?,
        curve_paused_ms: optional("curve_paused")?,
        fleet_rate: int("fleet_rate")?,
        expired_at_ms: optional("expired_at")?,
        rate_before_cuts: optional("rate_before_cuts")?,
        recounted_at_ms: optional("recounted_at")?,
    })
}

fn decode_record(text: &str, seen_ms: i64) -> Result<ProcessRecord, ProtocolError> {
    let parts: Vec<&str> = text.split(':').collect();
    let [lease, owed, retry_demand, send_demand] = parts[..] else {
        return Err(ProtocolError::new(
            "record",
            text,
            "lease:owed:retry_demand:send_demand",
        ));
    };
    Ok(ProcessRecord {
        lease: stored_int("lease", lease, 0, MAX_STORED)?,
        owed: stored_int("owed", owed, 0, MAX_STORED)?,
        retry_demand: stored_int("retry_demand", retry_demand, 0, MAX_STORED)?,
        send_demand: stored_int("send_demand", send_demand, 0, MAX_STORED)?,
        seen_ms,
    })
}

/// A stored integer: what Lua's `%d` writes (an optional minus, digits), within bounds.
fn stored_int(name: &'static str, text: &str, least: i64, most: i64) -> Result<i64, ProtocolError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let well_formed =
        !digits.is_empty() && digits.len() <= 17 && digits.bytes().all(|b| b.is_ascii_digit());
    well_formed
        .then(|| text.parse::<i64>().ok())
        .flatten()
        .filter(|value| (least..=most).contains(value))
        .ok_or_else(|| ProtocolError::new(name, text, &format!("an integer in {least}..={most}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_state_is_no_fleet_and_orphan_records_are_refused() {
        let state = decode_state(&[], &[], &[]).expect("empty is valid");
        assert!(state.fleet().is_none());
        let orphan = [("0000000000000001".to_owned(), "1:0:0:0".to_owned())];
        assert!(decode_state(&[], &orphan, &[]).is_err());
    }

    /// The `state` hash of an earlier script of protocol 1: every field but those added since.
    fn earlier_state() -> Vec<(String, String)> {
        let settings = ("settings", Settings::example().encode());
        let ints = [
            "born",
            "now",
            "relearn_until",
            "pool",
            "leased",
            "retry_demand",
            "send_demand",
            "tick_start",
            "tick_calls",
            "tick_sends",
            "tick_throttles",
            "tick_reports",
            "calls_rate",
            "send_rate",
            "admitted_rate",
            "engaged",
            "adopting",
            "w_max",
            "cold_cut",
            "cut_at",
            "fleet_rate",
        ];
        let ints = ints.iter().map(|name| (*name, "0".to_owned()));
        std::iter::once(settings)
            .chain(ints)
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    #[test]
    fn fields_an_earlier_script_did_not_write_read_as_zero() {
        let state = decode_state(&earlier_state(), &[], &[]).expect("an earlier state is valid");
        let fleet = state.fleet().expect("a fleet");
        assert_eq!(
            (
                fleet.departed_demand,
                fleet.tick_successes,
                fleet.tick_demand,
                fleet.curve_paused_ms,
                fleet.last_tick_sends,
                fleet.last_tick_throttles,
                fleet.calls_failing
            ),
            (0, 0, 0, 0, 0, 0, false)
        );
        let since = (
            fleet.expired_at_ms,
            fleet.rate_before_cuts,
            fleet.recounted_at_ms,
        );
        assert_eq!(since, (0, 0, 0));
        let mut failing = earlier_state();
        failing.push(("calls_failing".to_owned(), "2".to_owned()));
        assert!(
            decode_state(&failing, &[], &[]).is_err(),
            "a flag is 0 or 1"
        );
    }
}
