//! `retry_core::http::RetryAfter::from_headers` and `parse_retry_after` on `name=value` header
//! lines and a clock: see `retry_core_fuzz::retry_after::check`.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    match retry_core_fuzz::retry_after::check(data) {
        Some(()) => Corpus::Keep,
        None => Corpus::Reject,
    }
});
