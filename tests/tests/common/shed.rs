//! An error type that can hold a local refusal: what a caller of the shedding APIs
//! (`Retry::shed_load`, `RetryLoop::shed_load`, `#[retryable(shed = true)]`) writes.

use retry_core::{LoadShed, RetryInfo, RetrySafety};

#[derive(Debug)]
pub enum Error {
    /// The service asked to slow down.
    Throttled,
    /// Refused locally: the service never saw the call.
    Shed(LoadShed),
}

impl RetryInfo for Error {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            Error::Throttled => RetrySafety::Yes,
            Error::Shed(_) => RetrySafety::No,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, Error::Throttled)
    }
}

impl From<LoadShed> for Error {
    fn from(shed: LoadShed) -> Self {
        Error::Shed(shed)
    }
}
