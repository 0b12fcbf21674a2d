//! `transparent` over `io::Error` and over a type parameter.
#![deny(warnings, unused_qualifications)]

use retry_core::RetryInfo;

#[derive(Debug, thiserror::Error, RetryInfo)]
enum Error<E: std::error::Error + 'static> {
    #[error(transparent)]
    #[retry(transparent)]
    Io(#[from] std::io::Error),
    #[error("inner: {inner}")]
    #[retry(transparent)]
    Inner { inner: E },
}

#[derive(Debug, thiserror::Error, RetryInfo)]
#[error(transparent)]
#[retry(transparent)]
struct Wrapper<E>(E)
where
    E: std::error::Error;

fn main() {
    let error: Error<std::io::Error> = std::io::Error::from(std::io::ErrorKind::TimedOut).into();
    assert!(error.is_timeout());
    let inner = Error::Inner {
        inner: std::io::Error::from(std::io::ErrorKind::TimedOut),
    };
    assert!(inner.is_timeout());
    assert!(Wrapper(std::io::Error::from(std::io::ErrorKind::TimedOut)).is_timeout());
}
