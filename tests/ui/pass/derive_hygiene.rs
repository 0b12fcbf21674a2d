//! The generated code does not depend on names in scope: a local `Option`, `Some`, `Duration`,
//! `RetrySafety`, `Fault`, `core` or `bool` do not break it; raw identifiers work.
#![deny(warnings, unused_qualifications)]
#![allow(non_camel_case_types, dead_code)]

use retry_core::RetryInfo as Derive;

struct Option;
struct Some;
struct RetrySafety;
struct Fault;
mod core {}
type bool = u8;

#[derive(Debug, Derive)]
enum r#enum {
    #[retry(throttling)]
    r#type {
        #[retry(after)]
        r#after: std::time::Duration,
    },
    #[retry(transparent)]
    r#match(std::io::Error),
    #[retry(fault = "client")]
    r#fn,
}

fn main() {
    from_macro();
    let value = r#enum::r#fn;
    let _ = retry_core::RetryInfo::retry_safety(&value);
}

macro_rules! error_enum {
    ($name:ident, $inner:ty, $delay:ty) => {
        #[derive(Debug, Derive)]
        enum $name {
            #[retry(transparent)]
            Inner($inner),
            #[retry(throttling)]
            Slow {
                #[retry(after)]
                after: $delay,
            },
        }
    };
}

error_enum!(
    FromMacro,
    std::io::Error,
    std::option::Option<std::time::Duration>
);

fn from_macro() {
    let inner = FromMacro::Inner(std::io::ErrorKind::TimedOut.into());
    assert!(retry_core::RetryInfo::is_timeout(&inner));
    let slow = FromMacro::Slow { after: None };
    assert!(retry_core::RetryInfo::is_throttling(&slow));
}
