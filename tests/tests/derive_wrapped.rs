//! `#[derive(RetryInfo)]` on variants that wrap an error and say nothing with `#[retry(...)]`:
//! thiserror's `#[from]`, `#[source]`, a field named `source`, `#[error(transparent)]`. Such a
//! variant asks the wrapped error (as `#[retry(transparent)]` would), so a 503 inside an
//! `HttpStatusError` is retried; a wrapped type that does not describe itself is a compile
//! error at the field (`ui/derive/wrapped_*_without_retry_info.rs`). A `#[retry(...)]` on the
//! variant, on one of its fields or inherited from the enum still decides.

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::StatusCode;
use retry_core::http::{HttpStatusError, RetryAfter};
use retry_core::{Fault, RetryConfig, RetryInfo, RetrySafety, StandardStrategy, retry};

#[derive(Debug, thiserror::Error, retry_core::RetryInfo)]
enum CatalogError {
    /// `#[from]`, no `#[retry]`: asks the `HttpStatusError`.
    #[error(transparent)]
    Status(#[from] HttpStatusError),
    /// `#[source]` beside other fields: asks the field marked `#[source]`.
    #[error("reading {path} failed")]
    Read {
        path: String,
        #[source]
        cause: io::Error,
    },
    /// A field named `source` (thiserror's convention).
    #[error("connecting failed")]
    Connect { attempt: u32, source: io::Error },
    /// `#[error(transparent)]` alone: asks its single field.
    #[error(transparent)]
    Other(io::Error),
    /// Said with `#[retry]`: that decides, the wrapped error is not asked.
    #[error("write failed")]
    #[retry(never)]
    Write(#[source] io::Error),
    /// No error wrapped: the trait's defaults, as before.
    #[error("unknown")]
    Unknown(String),
}

/// An enum whose own keys are its variants' defaults: the wrapped error is not asked.
#[derive(Debug, thiserror::Error, retry_core::RetryInfo)]
#[retry(transient)]
enum InheritedError {
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A struct wrapping an error with `#[source]`.
#[derive(Debug, thiserror::Error, retry_core::RetryInfo)]
#[error("the request failed")]
struct RequestFailed {
    #[source]
    cause: HttpStatusError,
}

/// Generic over the wrapped error: implemented when it describes itself.
#[derive(Debug, thiserror::Error, retry_core::RetryInfo)]
enum Layered<E: std::error::Error + 'static> {
    #[error(transparent)]
    Inner(#[from] E),
}

fn status(code: u16) -> HttpStatusError {
    HttpStatusError::new(
        StatusCode::from_u16(code).expect("a status"),
        RetryAfter::Absent,
    )
}

fn io_error(kind: io::ErrorKind) -> io::Error {
    io::Error::from(kind)
}

#[test]
fn a_from_variant_asks_the_http_status_error() {
    let unavailable = CatalogError::Status(status(503));
    assert_eq!(unavailable.retry_safety(), RetrySafety::Yes);
    assert_eq!(unavailable.fault(), Fault::Server);
    let throttled = CatalogError::Status(HttpStatusError::new(
        StatusCode::TOO_MANY_REQUESTS,
        RetryAfter::After(Duration::from_secs(2)),
    ));
    assert!(throttled.is_throttling());
    assert_eq!(throttled.retry_after(), Some(Duration::from_secs(2)));
    let not_found = CatalogError::Status(status(404));
    assert_eq!(not_found.fault(), Fault::Client);
    assert_eq!(not_found.retry_safety(), status(404).retry_safety());
}

#[test]
fn a_source_field_is_asked_among_other_fields() {
    let reset = CatalogError::Read {
        path: "a".to_owned(),
        cause: io_error(io::ErrorKind::ConnectionReset),
    };
    let io_reset = io_error(io::ErrorKind::ConnectionReset);
    assert_eq!(reset.retry_safety(), io_reset.retry_safety());
    assert_eq!(reset.retry_safety(), RetrySafety::Maybe);
    let invalid = CatalogError::Read {
        path: "a".to_owned(),
        cause: io_error(io::ErrorKind::InvalidInput),
    };
    assert_eq!(
        invalid.retry_safety(),
        io_error(io::ErrorKind::InvalidInput).retry_safety()
    );
    let timed_out = CatalogError::Connect {
        attempt: 1,
        source: io_error(io::ErrorKind::TimedOut),
    };
    assert!(timed_out.is_timeout());
    assert_eq!(timed_out.retry_safety(), RetrySafety::Maybe);
    let refused = CatalogError::Other(io_error(io::ErrorKind::ConnectionRefused));
    assert_eq!(refused.retry_safety(), RetrySafety::Yes);
}

#[test]
fn a_retry_key_still_decides() {
    let write = CatalogError::Write(io_error(io::ErrorKind::ConnectionReset));
    assert_eq!(write.retry_safety(), RetrySafety::No);
    let unknown = CatalogError::Unknown("?".to_owned());
    assert_eq!(
        (unknown.retry_safety(), unknown.fault()),
        (RetrySafety::Maybe, Fault::Unknown)
    );
    // The enum's `transient` decides for its variants, even an invalid-input io::Error.
    let inherited = InheritedError::Io(io_error(io::ErrorKind::InvalidInput));
    assert_eq!(inherited.retry_safety(), RetrySafety::Yes);
    assert_eq!(inherited.fault(), Fault::Unknown);
}

#[test]
fn a_struct_and_a_generic_wrapper_ask_their_source() {
    let failed = RequestFailed { cause: status(502) };
    assert_eq!(failed.retry_safety(), RetrySafety::Yes);
    let layered: Layered<io::Error> = Layered::Inner(io_error(io::ErrorKind::ConnectionRefused));
    assert_eq!(layered.retry_safety(), RetrySafety::Yes);
    let broken: Layered<io::Error> = Layered::Inner(io_error(io::ErrorKind::BrokenPipe));
    assert_eq!(broken.retry_safety(), RetrySafety::Maybe);
}

#[tokio::test(start_paused = true)]
async fn a_503_inside_a_from_variant_is_retried() {
    let strategy = StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(3)
            .build()
            .expect("valid"),
    );
    let attempts = AtomicU32::new(0);
    let outcome = retry(&strategy, || async {
        match attempts.fetch_add(1, Ordering::Relaxed) {
            0 => Err(CatalogError::from(status(503))),
            _ => Ok("served"),
        }
    })
    .await;
    assert_eq!(outcome.expect("retried after the 503"), "served");
    assert_eq!(attempts.load(Ordering::Relaxed), 2);
}
