//! Generic types keep their generics; transparent fields over a parameter get a bound.
#![deny(warnings, unused_qualifications)]

use retry_core::RetryInfo;
use std::fmt::Debug;
use std::time::Duration;

#[derive(Debug, RetryInfo)]
enum ClientError<'a, E, T: Debug = ()>
where
    T: Clone,
{
    #[retry(transparent)]
    Inner(E),
    #[retry(transparent)]
    Boxed(Box<E>),
    #[retry(transparent)]
    Borrowed(&'a std::io::Error),
    #[retry(throttling)]
    Throttled {
        payload: T,
        #[retry(after)]
        after: Duration,
    },
    #[retry(never)]
    Invalid(&'a str),
}

#[derive(Debug, RetryInfo)]
#[retry(transient)]
struct Flaky<T, const N: usize> {
    values: [T; N],
    #[retry(after)]
    after: Option<Duration>,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<ClientError<'static, std::io::Error, u8>>();
    assert_retry_info::<Flaky<String, 3>>();
}
