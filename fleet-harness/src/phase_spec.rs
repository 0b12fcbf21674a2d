//! What one phase of a run is: the clients' mode, their request rate and whether the fault
//! timeline plays. Written `MODE[@RATE][+faults]` on the command line: `local`, `fleet`,
//! `split`, `fleet@900`, `fleet+faults`.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How the client processes hold their retry budget and rate limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Each process on its own (the library's default): its own quota, its own adaptive limiter.
    Local,
    /// The scope attached to a fleet on the harness's `redis-server`: one budget and one
    /// limiter for all processes.
    Fleet,
    /// Each process on its own as in `local`, behind a fixed gate at the server's limit times
    /// its share of the demand (the simulator's oracle static split; a per-process `governor`
    /// sized by hand).
    Split,
}

impl Mode {
    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Local => "local",
            Mode::Fleet => "fleet",
            Mode::Split => "split",
        }
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "local" => Ok(Mode::Local),
            "fleet" => Ok(Mode::Fleet),
            "split" => Ok(Mode::Split),
            other => Err(format!(
                "unknown mode `{other}` (write `local`, `fleet` or `split`)"
            )),
        }
    }
}

/// One phase: fresh client processes for its duration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PhaseSpec {
    /// The clients' mode.
    pub mode: Mode,
    /// Calls per second per process; `None`: the run's `--rate`.
    pub rate: Option<f64>,
    /// Whether the run's fault timeline plays during this phase.
    pub faults: bool,
}

impl FromStr for PhaseSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (rest, faults) = match text.strip_suffix("+faults") {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let (mode, rate) = match rest.split_once('@') {
            Some((mode, rate)) => {
                let rate: f64 = rate.parse().map_err(|_| {
                    format!("phase `{text}`: `{rate}` is not a rate (calls per second per process)")
                })?;
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(format!("phase `{text}`: the rate must be positive"));
                }
                (mode, Some(rate))
            }
            None => (rest, None),
        };
        let mode = mode
            .parse()
            .map_err(|error| format!("phase `{text}`: {error}; e.g. `fleet@900+faults`"))?;
        if faults && mode != Mode::Fleet {
            return Err(format!(
                "phase `{text}`: faults act on redis-server, which only a fleet phase uses"
            ));
        }
        Ok(PhaseSpec { mode, rate, faults })
    }
}

impl fmt::Display for PhaseSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mode.name())?;
        if let Some(rate) = self.rate {
            write!(f, "@{rate}")?;
        }
        if self.faults {
            f.write_str("+faults")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_read_mode_rate_and_faults() {
        let phase: PhaseSpec = "fleet@900+faults".parse().expect("valid");
        assert_eq!(
            phase,
            PhaseSpec {
                mode: Mode::Fleet,
                rate: Some(900.0),
                faults: true
            }
        );
        assert_eq!(phase.to_string(), "fleet@900+faults");
        let local: PhaseSpec = "local".parse().expect("valid");
        assert_eq!(
            (local.mode, local.rate, local.faults),
            (Mode::Local, None, false)
        );
        let split: PhaseSpec = "split".parse().expect("valid");
        assert_eq!(
            (split.mode, split.to_string().as_str()),
            (Mode::Split, "split")
        );
    }

    #[test]
    fn bad_phases_say_what_is_wrong() {
        let cases = [
            ("remote", "unknown mode `remote`"),
            ("fleet@fast", "`fast` is not a rate"),
            ("fleet@0", "must be positive"),
            ("local+faults", "only a fleet phase uses"),
            ("split+faults", "only a fleet phase uses"),
        ];
        for (text, expected) in cases {
            let error = text.parse::<PhaseSpec>().unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
