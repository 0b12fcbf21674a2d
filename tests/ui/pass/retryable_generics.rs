//! `#[retryable]` with generics, where clauses, lifetimes, const generics, a generic error type,
//! `impl Trait` arguments and return types, and pattern arguments.
#![deny(warnings, unused_qualifications)]

use retry_core::{RetryInfo, RetrySafety, retryable};
use std::fmt::Display;

#[derive(Debug, Clone)]
struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

#[derive(Clone)]
struct Point {
    x: i32,
    y: i32,
}

/// Generic types, a lifetime and a where clause.
#[retryable(scope = "pass-generics")]
async fn first<'a, T, U: ?Sized>(items: &'a [T], label: &U) -> Result<&'a T, StoreError>
where
    T: Sync,
    U: Display + Sync,
{
    let _ = label.to_string();
    items.first().ok_or(StoreError)
}

/// A generic error type (`Debug`: a call that gives up logs its last error).
#[retryable(scope = "pass-generics")]
async fn generic_error<E>(fail: bool, error: E) -> Result<u32, E>
where
    E: RetryInfo + Clone + Send + std::fmt::Debug,
{
    if fail { Err(error) } else { Ok(1) }
}

/// A const generic.
#[retryable(scope = "pass-generics")]
async fn sum<const N: usize>(values: [u32; N]) -> Result<u32, StoreError> {
    Ok(values.iter().sum())
}

/// `impl Trait` arguments (by value: `+ Clone`; by reference: anything).
#[retryable(scope = "pass-generics")]
async fn describe(
    name: impl AsRef<str> + Clone,
    show: &impl Display,
    make: impl Fn() -> u32 + Clone,
) -> Result<String, StoreError> {
    Ok(format!("{} {show} {}", name.as_ref(), make()))
}

/// An `impl Trait` in the return type.
#[retryable(scope = "pass-generics")]
async fn displayable(value: u32) -> Result<impl Display, StoreError> {
    Ok(value)
}

/// Pattern arguments: tuples, structs, `mut`, `_`, references.
#[retryable(scope = "pass-generics")]
async fn patterns(
    (a, b): (u32, u32),
    Point { x, y }: Point,
    mut count: u32,
    _: String,
    &(c, d): &(u32, u32),
    mut out: &mut Vec<u32>,
) -> Result<i64, StoreError> {
    count += 1;
    out.push(count);
    out = &mut *out;
    out.push(a + b + c + d);
    Ok(i64::from(x) + i64::from(y))
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        assert_eq!(first(&[1, 2], "label").await.ok(), Some(&1));
        assert_eq!(generic_error(false, StoreError).await.ok(), Some(1));
        assert_eq!(sum([1, 2, 3]).await.ok(), Some(6));
        let text = describe("n", &5, || 7).await.ok();
        assert_eq!(text.as_deref(), Some("n 5 7"));
        assert_eq!(
            displayable(3).await.ok().map(|v| v.to_string()).as_deref(),
            Some("3")
        );
        let mut out = Vec::new();
        let value = patterns(
            (1, 2),
            Point { x: 3, y: 4 },
            0,
            String::new(),
            &(5, 6),
            &mut out,
        )
        .await;
        assert_eq!(value.ok(), Some(7));
        assert_eq!(out, [1, 14]);
    });
}
