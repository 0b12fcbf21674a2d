//! The store's own view of the fleet scope, read once a second from its `state` hash (the
//! fields the store script keeps): the fleet limiter's rate, the rate at its last cut and the
//! admitted rate it measured, the fleet's call rate and its retry tokens. What the processes'
//! leases are made of, to tell a store rule from a process's behaviour.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use crate::redis_process::COMMAND_TIMEOUT;
use crate::resp::{self, Reply};

/// The fleet scope's state in the store (rates in requests per second; `None`: not measured
/// yet).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StoreView {
    /// Whether the fleet limiter is engaged.
    pub engaged: bool,
    /// The fleet's send rate.
    pub fleet_rate: f64,
    /// The rate at the last cut (what the server admitted then, as the store measured it).
    pub w_max: f64,
    /// What the server admitted per second in the store's last measurement tick.
    pub admitted_rate: Option<f64>,
    /// The fleet's sends per second in that tick.
    pub send_rate: Option<f64>,
    /// The fleet's calls per second, averaged over about a window.
    pub calls_rate: Option<f64>,
    /// Retry tokens not leased.
    pub pool: i64,
    /// Retry tokens the processes hold.
    pub leased: i64,
    /// How long the fleet limiter's curve has been held since its last cut because the fleet
    /// did not use its rate, in seconds (0 in a state an earlier script wrote).
    pub curve_paused_s: f64,
}

impl StoreView {
    /// Reads the `state` hash at `key` of the server on `port`: `None` when it has no such
    /// hash (a store flushed or restarted empty, before the next sync).
    pub fn read(port: u16, key: &str) -> io::Result<Option<Self>> {
        match resp::command(port, &["HGETALL", key], COMMAND_TIMEOUT)? {
            Reply::Array(items) => Ok(Self::from_fields(&fields(&items))),
            other => Err(io::Error::other(format!(
                "HGETALL {key} answered {other:?}"
            ))),
        }
    }

    fn from_fields(fields: &BTreeMap<&str, i64>) -> Option<Self> {
        let get = |name: &str| fields.get(name).copied();
        // Rates are kept in thousandths of a request per second; -1 is "not measured".
        let rate = |name: &str| {
            get(name)
                .filter(|value| *value >= 0)
                .map(|value| value as f64 / 1000.0)
        };
        Some(Self {
            engaged: get("engaged")? == 1,
            fleet_rate: rate("fleet_rate")?,
            w_max: rate("w_max")?,
            admitted_rate: rate("admitted_rate"),
            send_rate: rate("send_rate"),
            calls_rate: rate("calls_rate"),
            pool: get("pool")?,
            leased: get("leased")?,
            curve_paused_s: get("curve_paused").unwrap_or(0) as f64 / 1000.0,
        })
    }
}

/// The hash's integer fields (the settings, which are not one, left out).
fn fields(items: &[Reply]) -> BTreeMap<&str, i64> {
    items
        .chunks_exact(2)
        .filter_map(|pair| match pair {
            [Reply::Bulk(Some(name)), Reply::Bulk(Some(value))] => {
                Some((name.as_str(), value.parse().ok()?))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(Some(text.to_owned()))
    }

    #[test]
    fn the_state_hash_reads_as_rates_per_second() {
        let items: Vec<Reply> = [
            ("settings", "60000,500,5000"),
            ("engaged", "1"),
            ("fleet_rate", "41900"),
            ("w_max", "500"),
            ("admitted_rate", "-1"),
            ("send_rate", "1790"),
            ("calls_rate", "71382"),
            ("pool", "3"),
            ("leased", "802"),
            ("curve_paused", "12500"),
        ]
        .iter()
        .flat_map(|(name, value)| [bulk(name), bulk(value)])
        .collect();
        let view = StoreView::from_fields(&fields(&items)).expect("a state");
        assert!(view.engaged);
        assert_eq!((view.fleet_rate, view.w_max), (41.9, 0.5));
        assert_eq!((view.admitted_rate, view.send_rate), (None, Some(1.79)));
        assert_eq!((view.pool, view.leased), (3, 802));
        assert_eq!(view.curve_paused_s, 12.5);
        assert_eq!(StoreView::from_fields(&fields(&[])), None, "no state yet");
    }
}
