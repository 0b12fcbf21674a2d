//! When calls start, from a seed so that processes do not call in step: a Poisson process
//! (exponential gaps) at a rate per second, or the same in on spells only, with off spells
//! between ([`Spells`]), as the simulator's on/off processes call.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::duration_arg::parse_duration;

/// On/off arrivals: on and off spells of exponential lengths with these means; calls arrive
/// only in the on spells, at the rate that keeps the process's mean rate over both
/// (`rate × (on + off) / on`). Written `ON,OFF` on the command line: `2s,5s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spells {
    /// The mean length of an on spell, in milliseconds.
    #[serde(rename = "on_ms", serialize_with = "crate::report::millis")]
    pub on: Duration,
    /// The mean length of an off spell, in milliseconds.
    #[serde(rename = "off_ms", serialize_with = "crate::report::millis")]
    pub off: Duration,
}

impl FromStr for Spells {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (on, off) = text.split_once(',').ok_or_else(|| {
            format!("`{text}`: write the mean on and off spells as `ON,OFF`, e.g. `2s,5s`")
        })?;
        let spell = |part: &str, name: &str| {
            let length = parse_duration(part)?;
            if length < MIN_SPELL {
                return Err(format!(
                    "`{text}`: the {name} spell must last at least {MIN_SPELL:?}, not {length:?}"
                ));
            }
            Ok(length)
        };
        Ok(Spells {
            on: spell(on, "on")?,
            off: spell(off, "off")?,
        })
    }
}

impl fmt::Display for Spells {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms,{}ms", self.on.as_millis(), self.off.as_millis())
    }
}

/// The shortest mean spell: the clients' timer ticks in milliseconds.
const MIN_SPELL: Duration = Duration::from_millis(1);

/// The gaps between a process's calls.
#[derive(Debug)]
pub struct Arrivals {
    rate: f64,
    spells: Option<SpellClock>,
    random: fastrand::Rng,
}

/// Where an on/off process is in its spells, in seconds from its first call's draw.
#[derive(Debug)]
struct SpellClock {
    /// The mean on spell, seconds.
    on_mean: f64,
    /// The mean off spell, seconds.
    off_mean: f64,
    now: f64,
    on: bool,
    spell_ends: f64,
}

impl Arrivals {
    /// Arrivals at a mean `rate` (positive and finite: the options are checked), Poisson
    /// throughout or in `spells`, drawn from `seed`. An on/off process starts in the spell it
    /// would be found in at a random instant.
    pub fn new(rate: f64, spells: Option<Spells>, seed: u64) -> Self {
        let mut random = fastrand::Rng::with_seed(seed);
        let spells = spells.map(|spells| {
            let (on, off) = (spells.on.as_secs_f64(), spells.off.as_secs_f64());
            let is_on = random.f64() * (on + off) < on;
            let mean = if is_on { on } else { off };
            SpellClock {
                on_mean: on,
                off_mean: off,
                now: 0.0,
                on: is_on,
                spell_ends: exponential(&mut random, mean),
            }
        });
        Self {
            rate,
            spells,
            random,
        }
    }

    /// The time to the next call.
    pub fn next_gap(&mut self) -> Duration {
        let Some(clock) = self.spells.as_mut() else {
            return Duration::from_secs_f64(exponential(&mut self.random, 1.0 / self.rate));
        };
        let (on, off) = (clock.on_mean, clock.off_mean);
        let gap_on = on / ((on + off) * self.rate);
        let from = clock.now;
        loop {
            if clock.on {
                let next = clock.now + exponential(&mut self.random, gap_on);
                if next < clock.spell_ends {
                    clock.now = next;
                    return Duration::from_secs_f64(next - from);
                }
                clock.now = clock.spell_ends;
                clock.on = false;
                clock.spell_ends = clock.now + exponential(&mut self.random, off);
            } else {
                clock.now = clock.now.max(clock.spell_ends);
                clock.on = true;
                clock.spell_ends = clock.now + exponential(&mut self.random, on);
            }
        }
    }
}

/// An exponential draw with `mean` (seconds).
fn exponential(random: &mut fastrand::Rng, mean: f64) -> f64 {
    // 1 - u is in (0, 1]: its logarithm is finite.
    let uniform = 1.0 - random.f64();
    -uniform.ln() * mean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_gap_is_one_over_the_rate() {
        let mut arrivals = Arrivals::new(100.0, None, 7);
        let total: Duration = (0..100_000).map(|_| arrivals.next_gap()).sum();
        let mean = total.as_secs_f64() / 100_000.0;
        assert!((mean - 0.01).abs() < 0.0002, "mean gap {mean}");
    }

    #[test]
    fn on_off_arrivals_keep_the_mean_rate_and_come_in_bursts() {
        let spells: Spells = "1s,3s".parse().expect("valid");
        let mut arrivals = Arrivals::new(20.0, Some(spells), 7);
        let gaps: Vec<f64> = (0..100_000)
            .map(|_| arrivals.next_gap().as_secs_f64())
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.05).abs() < 0.002, "mean gap {mean}");
        // In an on spell calls come at 80/s (a gap of 12.5 ms on average); the off spells
        // (3 s on average, about 1,250 of them) make gaps far longer than a Poisson stream at
        // 20/s ever does.
        let short = gaps.iter().filter(|gap| **gap < 0.05).count();
        let long = gaps.iter().filter(|gap| **gap > 1.0).count();
        assert!(short > 90_000, "{short} gaps under 50 ms");
        assert!(long > 500, "{long} gaps over 1 s");
        let mut poisson = Arrivals::new(20.0, None, 7);
        let poisson_long = (0..100_000)
            .filter(|_| poisson.next_gap() > Duration::from_secs(1))
            .count();
        assert!(poisson_long < 10, "{poisson_long} Poisson gaps over 1 s");
    }

    #[test]
    fn spells_are_read_and_bad_ones_say_what_to_write() {
        let spells: Spells = "500ms,2s".parse().expect("valid");
        assert_eq!(
            (spells.on, spells.off),
            (Duration::from_millis(500), Duration::from_secs(2))
        );
        assert_eq!(spells.to_string().parse::<Spells>(), Ok(spells));
        let cases = [
            ("2s", "`ON,OFF`"),
            ("2s,", "has no unit"),
            ("0s,2s", "the on spell must last at least"),
            ("2s,0ms", "the off spell must last at least"),
            ("2s,5h", "unknown unit"),
        ];
        for (text, expected) in cases {
            let error = text.parse::<Spells>().unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
