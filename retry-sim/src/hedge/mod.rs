//! Hedged requests: a copy of an attempt still in flight, sent after a delay; the first
//! answer wins ("The Tail at Scale", Dean and Barroso, CACM 2013).
//!
//! A strategy that hedges carries a [`HedgeSpec`]. `retry-core`'s hedging ([`ours`]) is the
//! runtime's own `HedgedLoop`, which the event loop drives for each call in place of the
//! `RetryLoop` ([`policy`](crate::policy)). For the baselines each simulated client gets a
//! [`Hedger`] (its per-client state: tower's latency histogram, gRPC's token count), and each
//! call a [`CallHedge`]. The event loop asks the hedger three things: when a call's first hedge is
//! due once its attempt is sent ([`Hedger::start`]), whether a due hedge is sent
//! ([`Hedger::due`]), and what a copy's answer means for the call ([`Hedger::answer`]): the
//! call's answer, wait for the other copies, or send the next copy at some time. A call's
//! answer then goes to its retry loop as an unhedged attempt's would.
//!
//! [`ours`]: `retry-core`'s hedging, a fixed or percentile delay, charged to the client's
//! quota like a retry by the runtime itself. The baselines: [`tower`]'s `hedge` middleware and [`grpc`]'s
//! `hedgingPolicy`; the built-in scenarios that compare them are in [`scenarios`].

pub mod goals;
pub mod grpc;
pub mod ours;
pub mod report;
pub mod scenarios;
pub mod tower;

use std::fmt;

use crate::time::{MILLI, Nanos, SECOND};

use grpc::{GrpcCall, GrpcHedging, GrpcHedgingSpec, GrpcNext};
use ours::OursHedgeSpec;
use tower::{TowerHedge, TowerHedgeSpec};

/// How a strategy hedges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeSpec {
    /// tower's `hedge` middleware.
    Tower(TowerHedgeSpec),
    /// gRPC's `hedgingPolicy` with `retryThrottling`.
    Grpc(GrpcHedgingSpec),
    /// `retry-core`'s hedging over one of its strategies.
    Ours(OursHedgeSpec),
}

impl HedgeSpec {
    /// A baseline client's hedging state, fresh; `None` for [`HedgeSpec::Ours`], whose calls
    /// the runtime's `HedgedLoop` hedges.
    ///
    /// ```
    /// use retry_sim::hedge::{HedgeSpec, ours::OursHedgeSpec, tower::TowerHedgeSpec};
    /// let spec = HedgeSpec::Tower(TowerHedgeSpec { percentile: 0.95, min_data_points: 10, period: 1 });
    /// assert!(spec.client().is_some());
    /// let ours = HedgeSpec::Ours(OursHedgeSpec::parse("p95").unwrap());
    /// assert!(ours.client().is_none());
    /// ```
    pub fn client(&self) -> Option<Hedger> {
        match *self {
            HedgeSpec::Tower(spec) => Some(Hedger::Tower(TowerHedge::new(spec))),
            HedgeSpec::Grpc(spec) => Some(Hedger::Grpc(GrpcHedging::new(spec))),
            HedgeSpec::Ours(_) => None,
        }
    }

    /// Whether the layer's attempt timeout cuts each copy: a client's per-attempt timeout
    /// under tower's layer; gRPC has none (the call's deadline applies to every copy).
    pub fn cuts_attempts(&self) -> bool {
        !matches!(self, HedgeSpec::Grpc(_))
    }
}

impl fmt::Display for HedgeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |n: Nanos| n as f64 / MILLI as f64;
        match self {
            HedgeSpec::Tower(spec) => write!(
                f,
                "tower `hedge`: one hedge after the p{} of the last {:.0} s's successful latencies \
                 (rotating histogram, min_data_points {}), first answer wins (an error included), \
                 no budget",
                spec.percentile * 100.0,
                spec.period as f64 / SECOND as f64,
                spec.min_data_points
            ),
            HedgeSpec::Ours(spec) => write!(f, "{spec}"),
            HedgeSpec::Grpc(spec) => write!(
                f,
                "gRPC hedgingPolicy (maxAttempts {}, hedgingDelay {:.0} ms, UNAVAILABLE and \
                 INTERNAL non-fatal: the next copy at once, pushback honoured) with \
                 retryThrottling (maxTokens {}, tokenRatio {}), no per-attempt timeout, no retries",
                spec.max_attempts,
                ms(spec.delay),
                spec.max_tokens,
                spec.token_ratio
            ),
        }
    }
}

/// One baseline client's hedging state.
#[derive(Debug, Clone)]
pub enum Hedger {
    /// tower's `hedge` layer.
    Tower(TowerHedge),
    /// A gRPC channel's hedging policy.
    Grpc(GrpcHedging),
}

/// One call's hedging state under a baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallHedge {
    /// Not hedging.
    #[default]
    Off,
    /// Under tower's layer (its one hedge's timer is all it has).
    Tower,
    /// Under a gRPC hedging policy.
    Grpc(GrpcCall),
}

/// What one copy of a call's attempt answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A success, `latency` after the copy was sent.
    Ok {
        /// From the copy's send to its answer.
        latency: Nanos,
    },
    /// A failure the server answered, with its `Retry-After` (gRPC's pushback) if any.
    Failed {
        /// The server's `Retry-After`.
        pushback: Option<Nanos>,
    },
    /// No answer within the attempt timeout.
    TimedOut,
}

/// What a copy's answer means for its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It is the call's answer: the other copies are dropped, the retry loop gets it.
    Final,
    /// Wait for the other copies in flight.
    Wait,
    /// Send the next copy at this time (the call waits for it, or for the copies in flight).
    SendAt(Nanos),
}

/// Whether a due hedge goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Sent; the next one is due at this time, if any.
    Send(Option<Nanos>),
    /// Refused by the client's budget: not sent (and, under gRPC, no more for the call).
    Refused,
}

impl Hedger {
    /// A call's attempt was sent at `now` (its first, `call` then [`CallHedge::Off`], or a
    /// retry): the call's hedging state is set, and when its first hedge is due returned, if it
    /// gets one.
    pub fn start(&mut self, call: &mut CallHedge, now: Nanos) -> Option<Nanos> {
        match self {
            Hedger::Tower(tower) => {
                *call = CallHedge::Tower;
                tower.delay(now).map(|delay| now.saturating_add(delay))
            }
            Hedger::Grpc(grpc) => {
                let state = grpc.start();
                *call = CallHedge::Grpc(state);
                grpc.first_hedge(&state, now)
            }
        }
    }

    /// A hedge of the call is due at `now`.
    pub fn due(&mut self, call: &mut CallHedge, now: Nanos) -> Due {
        match (self, call) {
            (Hedger::Tower(_), CallHedge::Tower) => Due::Send(None),
            (Hedger::Grpc(grpc), CallHedge::Grpc(call)) => {
                if grpc.may_send(call) {
                    Due::Send(grpc.next_after_send(call, now))
                } else {
                    Due::Refused
                }
            }
            // A call started under another hedger never meets this one.
            _ => Due::Refused,
        }
    }

    /// A copy of the call answered at `now`; `in_flight` other copies still wait for theirs.
    pub fn answer(
        &mut self,
        call: &mut CallHedge,
        answer: Answer,
        in_flight: usize,
        now: Nanos,
    ) -> Verdict {
        match (self, call) {
            (Hedger::Tower(tower), CallHedge::Tower) => {
                if let Answer::Ok { latency } = answer {
                    tower.record_success(latency, now);
                }
                // `Select` returns the first copy to complete, whatever it returned.
                Verdict::Final
            }
            (Hedger::Grpc(grpc), CallHedge::Grpc(call)) => {
                let failure = match answer {
                    Answer::Ok { .. } => None,
                    Answer::Failed { pushback } => Some(pushback),
                    Answer::TimedOut => Some(None),
                };
                match grpc.on_answer(call, failure, in_flight, now) {
                    GrpcNext::End => Verdict::Final,
                    GrpcNext::Wait => Verdict::Wait,
                    GrpcNext::SendAt(at) => Verdict::SendAt(at),
                }
            }
            _ => Verdict::Final,
        }
    }
}
