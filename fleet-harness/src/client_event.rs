//! The client processes' timeline (autoscaling and crashes): `--client-event 30s:kill:3
//! --client-event 40s:start:4 --client-event 50s:leave:2`, each at a whole second from the start
//! of every phase, checked as a whole before anything starts.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::duration_arg::parse_duration;

/// What happens to the phase's client processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClientAction {
    /// New processes join (a scale-out), at the run's `--rate`.
    Start,
    /// The last started processes crash: `SIGKILL` to each one's PID.
    Kill,
    /// The last started processes leave: `SIGTERM` to each one's PID, on which a client stops
    /// calling and exits cleanly (a scale-in).
    Leave,
}

impl ClientAction {
    /// The action's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ClientAction::Start => "start",
            ClientAction::Kill => "kill",
            ClientAction::Leave => "leave",
        }
    }
}

/// One event of the timeline: `count` processes started, killed or leaving `at` into a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClientEvent {
    /// When, from the start of the phase (whole seconds).
    #[serde(rename = "at_s", serialize_with = "seconds")]
    pub at: Duration,
    /// What happens.
    pub action: ClientAction,
    /// To how many processes.
    pub count: u32,
}

fn seconds<S: serde::Serializer>(at: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(at.as_secs())
}

impl FromStr for ClientEvent {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let example = "write `<time>:<start|kill|leave>:<count>`, e.g. `30s:kill:3`";
        let mut parts = text.splitn(3, ':');
        let (Some(at), Some(action), Some(count)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("client event `{text}`: {example}"));
        };
        let at = parse_duration(at).map_err(|error| format!("client event `{text}`: {error}"))?;
        if at.subsec_nanos() != 0 {
            return Err(format!(
                "client event `{text}`: the time must be whole seconds"
            ));
        }
        let action = match action {
            "start" => ClientAction::Start,
            "kill" => ClientAction::Kill,
            "leave" => ClientAction::Leave,
            other => {
                return Err(format!(
                    "client event `{text}`: unknown action `{other}`; {example}"
                ));
            }
        };
        let count: u32 = count
            .parse()
            .ok()
            .filter(|&count| count > 0)
            .ok_or_else(|| {
                format!("client event `{text}`: `{count}` is not a positive count of processes")
            })?;
        Ok(ClientEvent { at, action, count })
    }
}

impl fmt::Display for ClientEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}s:{}:{}",
            self.at.as_secs(),
            self.action.name(),
            self.count
        )
    }
}

/// The events in time order, checked against the phase: each within its seconds (after
/// second 0), and at least one process running after each (a fleet of none measures nothing).
pub fn check_client_timeline(
    mut events: Vec<ClientEvent>,
    initial: u32,
    duration: Duration,
) -> Result<Vec<ClientEvent>, String> {
    events.sort_by_key(|event| event.at);
    let mut running = u64::from(initial);
    for event in &events {
        if event.at.is_zero() || event.at >= duration {
            return Err(format!(
                "client event `{event}` is outside the phase: give a time in (0 s, {} s)",
                duration.as_secs()
            ));
        }
        running = match event.action {
            ClientAction::Start => running + u64::from(event.count),
            ClientAction::Kill | ClientAction::Leave => running
                .checked_sub(u64::from(event.count))
                .filter(|&left| left > 0)
                .ok_or_else(|| {
                    format!(
                        "client event `{event}` would leave no process running ({running} run then)"
                    )
                })?,
        };
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_time_action_and_count() {
        let event: ClientEvent = "30s:kill:3".parse().expect("valid");
        assert_eq!(
            event,
            ClientEvent {
                at: Duration::from_secs(30),
                action: ClientAction::Kill,
                count: 3
            }
        );
        assert_eq!(event.to_string(), "30s:kill:3");
        let start: ClientEvent = "40s:start:2".parse().expect("valid");
        assert_eq!((start.action, start.count), (ClientAction::Start, 2));
    }

    #[test]
    fn bad_events_say_what_to_write() {
        let cases = [
            ("30s:kill", "write `<time>:<start|kill|leave>:<count>`"),
            ("30s:crash:3", "unknown action `crash`"),
            ("30s:kill:0", "not a positive count"),
            ("30s:kill:-1", "not a positive count"),
            ("30:kill:1", "has no unit"),
            ("1.5s:kill:1", "whole seconds"),
        ];
        for (text, expected) in cases {
            let error = text.parse::<ClientEvent>().unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn the_timeline_is_sorted_and_never_empties_the_fleet() {
        let events: Vec<ClientEvent> = ["40s:kill:3", "20s:start:4"]
            .iter()
            .map(|text| text.parse().expect("valid"))
            .collect();
        let sorted = check_client_timeline(events.clone(), 8, Duration::from_secs(60))
            .expect("8 + 4 - 3 = 9");
        assert_eq!(sorted[0].action, ClientAction::Start);
        let error = check_client_timeline(
            vec!["10s:kill:8".parse().expect("valid")],
            8,
            Duration::from_secs(60),
        )
        .unwrap_err();
        assert!(error.contains("no process running"), "{error}");
        let error = check_client_timeline(events, 8, Duration::from_secs(30)).unwrap_err();
        assert!(error.contains("outside the phase"), "{error}");
    }
}
