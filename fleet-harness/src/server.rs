//! The throttling HTTP server on loopback: admits `rate` requests per second across all
//! clients (a [`TokenBucket`] with a small burst) and answers the rest `429 Too Many Requests`
//! with `Retry-After` (RFC 9110 section 10.2.3); of the admitted requests it answers a share
//! drawn at random from a seed `503 Service Unavailable` (a flaky upstream), answers an admitted
//! request after a service time drawn from a seed, and counts each answer per second of the
//! phase.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http::header::{HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::token_bucket::TokenBucket;

/// Mixed into the seed of the errors' draws for the service times': two streams of one seed.
const SERVICE_TIME_STREAM: u64 = 0x5e41_71ce;

/// The server's limit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limit {
    /// Requests admitted per second, across all clients.
    pub rate: f64,
    /// The bucket's size: how many requests an idle server admits at once.
    pub burst: f64,
    /// The `Retry-After` of a 429, in whole seconds.
    pub retry_after_secs: u32,
    /// How long into each phase the server admits everything before it starts enforcing
    /// `rate` (the simulator's S3 starts throttling a fleet in its steady state).
    #[serde(rename = "enforced_after_ms", serialize_with = "crate::report::millis")]
    pub enforced_after: Duration,
    /// The share of admitted requests answered `503` (drawn at random, seeded), in [0, 1).
    pub error_rate: f64,
    /// The seed of those draws (and of the service times').
    pub error_seed: u64,
    /// The mean time the server takes to answer an admitted request (exponentially
    /// distributed, seeded; zero: at once). A 429 is answered at once.
    #[serde(rename = "service_time_ms", serialize_with = "crate::report::millis")]
    pub service_time: Duration,
}

/// What the server answered in one second of a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ServerSecond {
    /// Requests admitted (answered 200).
    pub admitted: u64,
    /// Requests refused (answered 429).
    pub throttled: u64,
    /// Requests admitted but answered 503 (the `error_rate` share).
    pub errors: u64,
}

/// The server's answer to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// 200.
    Ok,
    /// 429 with `Retry-After`: over the limit.
    Throttled,
    /// 503: admitted (a token taken) but failed.
    Unavailable,
}

/// A running server; it stops when dropped.
#[derive(Debug)]
pub struct LimitServer {
    addr: SocketAddr,
    state: Arc<Mutex<PhaseCounts>>,
    accept: JoinHandle<()>,
}

/// The bucket and the counts of the current phase.
#[derive(Debug)]
struct PhaseCounts {
    limit: Limit,
    origin: Instant,
    bucket: TokenBucket,
    seconds: Vec<ServerSecond>,
    errors: fastrand::Rng,
    service_times: fastrand::Rng,
}

impl PhaseCounts {
    fn new(limit: Limit, origin: Instant, seconds: usize) -> Self {
        Self {
            limit,
            origin,
            bucket: TokenBucket::new(limit.rate, limit.burst),
            seconds: vec![ServerSecond::default(); seconds],
            errors: fastrand::Rng::with_seed(limit.error_seed),
            service_times: fastrand::Rng::with_seed(limit.error_seed ^ SERVICE_TIME_STREAM),
        }
    }

    /// How long to take over an answer: a draw of the service time for an admitted request,
    /// none for a refused one.
    fn service_time(&mut self, answer: Answer) -> Duration {
        if answer == Answer::Throttled || self.limit.service_time.is_zero() {
            return Duration::ZERO;
        }
        exponential(self.limit.service_time, self.service_times.f64())
    }

    /// Admits or refuses a request arriving now (an admitted one may fail), and counts it in
    /// its second.
    fn answer(&mut self) -> Answer {
        let since = Instant::now().saturating_duration_since(self.origin);
        let admitted = since < self.limit.enforced_after || self.bucket.admit(since);
        let second = usize::try_from(since.as_secs()).unwrap_or(usize::MAX);
        let answer = if !admitted {
            Answer::Throttled
        } else if self.limit.error_rate > 0.0 && self.errors.f64() < self.limit.error_rate {
            Answer::Unavailable
        } else {
            Answer::Ok
        };
        if let Some(counts) = self.seconds.get_mut(second) {
            match answer {
                Answer::Ok => counts.admitted += 1,
                Answer::Throttled => counts.throttled += 1,
                Answer::Unavailable => {
                    counts.admitted += 1;
                    counts.errors += 1;
                }
            }
        }
        answer
    }
}

impl LimitServer {
    /// Starts the server on a port of 127.0.0.1 that the system picks.
    pub async fn start(limit: Limit) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(PhaseCounts::new(limit, Instant::now(), 0)));
        let retry_after = HeaderValue::from(limit.retry_after_secs);
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&state), retry_after));
        Ok(Self {
            addr,
            state,
            accept,
        })
    }

    /// `http://127.0.0.1:<port>/item`: what the clients call.
    pub fn url(&self) -> String {
        format!("http://{}/item", self.addr)
    }

    /// Starts a phase at `origin`: a full bucket, and counts for `seconds` seconds from then
    /// (requests before `origin` count in its first second, those after the last are not
    /// counted).
    pub fn start_phase(&self, origin: Instant, seconds: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let limit = state.limit;
        *state = PhaseCounts::new(limit, origin, seconds);
    }

    /// The counts of `second` of the current phase (final once that second is over).
    pub fn second(&self, second: usize) -> ServerSecond {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.seconds.get(second).copied().unwrap_or_default()
    }
}

impl Drop for LimitServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<Mutex<PhaseCounts>>,
    retry_after: HeaderValue,
) {
    while let Ok((stream, _)) = listener.accept().await {
        // Small requests and replies: sent at once, not held for coalescing.
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        let retry_after = retry_after.clone();
        let service = service_fn(move |_request: hyper::Request<hyper::body::Incoming>| {
            let (answer, took) = {
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                let answer = state.answer();
                (answer, state.service_time(answer))
            };
            let response = reply(answer, &retry_after);
            async move {
                if !took.is_zero() {
                    tokio::time::sleep(took).await;
                }
                Ok::<_, Infallible>(response)
            }
        });
        tokio::spawn(async move {
            // A client that goes away mid-request ends its connection: nothing to report.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A time drawn from an exponential distribution of mean `mean`, by `uniform` in [0, 1).
fn exponential(mean: Duration, uniform: f64) -> Duration {
    mean.mul_f64(-(1.0 - uniform).ln())
}

fn reply(answer: Answer, retry_after: &HeaderValue) -> Response<Full<Bytes>> {
    let body = if answer == Answer::Ok { "ok" } else { "" };
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    match answer {
        Answer::Ok => {}
        Answer::Throttled => {
            *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            response
                .headers_mut()
                .insert(RETRY_AFTER, retry_after.clone());
        }
        Answer::Unavailable => *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE,
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of 3 and a token per 1000 s: the test's requests see the burst and nothing else,
    /// however slow the machine.
    fn limit() -> Limit {
        Limit {
            rate: 0.001,
            burst: 3.0,
            retry_after_secs: 1,
            enforced_after: Duration::ZERO,
            error_rate: 0.0,
            error_seed: 1,
            service_time: Duration::ZERO,
        }
    }

    #[test]
    fn service_times_are_exponential_of_the_mean_and_none_for_a_429() {
        let mut counts = PhaseCounts::new(
            Limit {
                service_time: Duration::from_millis(50),
                ..limit()
            },
            Instant::now(),
            1,
        );
        let draws = 10_000;
        let total: Duration = (0..draws).map(|_| counts.service_time(Answer::Ok)).sum();
        let mean = total.as_secs_f64() / f64::from(draws);
        assert!((mean - 0.05).abs() < 0.0025, "mean {mean}");
        assert_eq!(counts.service_time(Answer::Throttled), Duration::ZERO);
        let mut at_once = PhaseCounts::new(limit(), Instant::now(), 1);
        assert_eq!(at_once.service_time(Answer::Ok), Duration::ZERO);
    }

    #[tokio::test]
    async fn over_the_burst_requests_get_429_with_retry_after_and_are_counted() {
        let server = LimitServer::start(limit()).await.expect("starts");
        server.start_phase(Instant::now(), 5);
        let client = reqwest::Client::new();
        let mut statuses = Vec::new();
        for _ in 0..5 {
            let response = client.get(server.url()).send().await.expect("answers");
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .map(|value| value.to_str().expect("ascii").to_owned());
            statuses.push((response.status().as_u16(), retry_after));
        }
        let throttled = (429, Some("1".to_owned()));
        assert_eq!(
            statuses,
            [
                (200, None),
                (200, None),
                (200, None),
                throttled.clone(),
                throttled
            ]
        );
        let (admitted, refused) = (0..5)
            .map(|second| server.second(second))
            .fold((0, 0), |(admitted, refused), counts| {
                (admitted + counts.admitted, refused + counts.throttled)
            });
        assert_eq!((admitted, refused), (3, 2));
    }

    #[tokio::test]
    async fn before_the_limit_is_enforced_everything_is_admitted() {
        let later = Limit {
            enforced_after: Duration::from_secs(3600),
            ..limit()
        };
        let server = LimitServer::start(later).await.expect("starts");
        server.start_phase(Instant::now(), 5);
        let client = reqwest::Client::new();
        for _ in 0..5 {
            let response = client.get(server.url()).send().await.expect("answers");
            assert_eq!(response.status(), StatusCode::OK);
        }
    }

    #[test]
    fn the_error_rate_answers_its_share_of_admitted_requests_503() {
        let flaky = Limit {
            rate: 1000.0,
            burst: 10_000.0,
            error_rate: 0.1,
            ..limit()
        };
        let mut counts = PhaseCounts::new(flaky, Instant::now(), 1);
        let answers: Vec<Answer> = (0..10_000).map(|_| counts.answer()).collect();
        let failed = answers
            .iter()
            .filter(|a| **a == Answer::Unavailable)
            .count();
        assert!(
            (900..1100).contains(&failed),
            "{failed} of 10000 answered 503"
        );
        assert!(!answers.contains(&Answer::Throttled));
        let second = counts.seconds[0];
        assert_eq!((second.admitted, second.errors), (10_000, failed as u64));
    }
}
