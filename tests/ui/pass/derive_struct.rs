//! Structs: named, tuple and unit.
#![deny(warnings, unused_qualifications)]

use retry_core::RetryInfo;
use std::time::Duration;

#[derive(Debug, RetryInfo)]
#[retry(throttling)]
struct Throttled {
    #[retry(after)]
    retry_after: Duration,
    code: u16,
}

#[derive(Debug, RetryInfo)]
#[retry(timeout)]
struct TimedOut(#[retry(after)] Option<Duration>);

#[derive(Debug, RetryInfo)]
#[retry(fault = "client")]
struct BadRequest;

#[derive(Debug, RetryInfo)]
struct Opaque {
    message: String,
}

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
struct Wrapped(std::io::Error);

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
struct Named {
    source: std::io::Error,
}

fn main() {
    let _ = Throttled {
        retry_after: Duration::ZERO,
        code: 429,
    }
    .retry_after();
    let _ = TimedOut(None).is_timeout();
    let _ = BadRequest.retry_safety();
    let _ = Opaque {
        message: String::new(),
    }
    .message;
    let _ = Wrapped(std::io::ErrorKind::TimedOut.into()).is_timeout();
    let _ = Named {
        source: std::io::ErrorKind::TimedOut.into(),
    }
    .fault();
}
