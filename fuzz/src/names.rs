//! The name parsers: `RetryMode`, `Jitter` and `RetryPreset` (`FromStr`).
//!
//! Each accepts one of its `NAMES`, trimmed, in any ASCII case, and nothing else.

use std::fmt::{Debug, Display};
use std::str::FromStr;

use retry_core::backoff::Jitter;
use retry_core::{RetryMode, RetryPreset};

/// Every property of the three name parsers on `input`.
pub fn check(input: &str) {
    check_one(input, &RetryMode::ALL, &RetryMode::NAMES);
    check_one(input, &Jitter::ALL, &Jitter::NAMES);
    check_one(input, &RetryPreset::ALL, &RetryPreset::NAMES);
}

/// One parser: it agrees with a reference (the trimmed input, ASCII-lowercased, is one of
/// `names`), a parsed value prints as its name and parses back from it, and an error quotes the
/// trimmed input.
fn check_one<T>(input: &str, all: &[T], names: &[&str])
where
    T: FromStr + Display + Debug + PartialEq + Copy,
    T::Err: Display + Debug,
{
    assert_eq!(all.len(), names.len(), "one name per value");
    let trimmed = input.trim();
    let lowercase = trimmed.to_ascii_lowercase();
    let expected = names
        .iter()
        .position(|name| *name == lowercase)
        .map(|at| all[at]);
    let parsed = input.parse::<T>();
    match (&parsed, expected) {
        (Ok(value), Some(want)) => {
            assert_eq!(*value, want, "{input:?}");
            let name = value.to_string();
            assert_eq!(
                name,
                names[all.iter().position(|v| v == value).expect("listed")]
            );
            assert_eq!(
                name.parse::<T>().ok(),
                Some(*value),
                "{name:?} does not parse back"
            );
        }
        (Err(error), None) => {
            let message = error.to_string();
            assert!(
                message.contains(&format!("`{trimmed}`")),
                "{input:?}: {message}"
            );
            for name in names {
                assert!(message.contains(name), "{input:?}: {message} omits {name}");
            }
        }
        _ => panic!("{input:?}: parsed as {parsed:?}, the reference says {expected:?}"),
    }
}
