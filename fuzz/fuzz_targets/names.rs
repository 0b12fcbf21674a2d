//! `RetryMode`, `Jitter` and `RetryPreset` from any UTF-8 text: see
//! `retry_core_fuzz::names::check`.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    match std::str::from_utf8(data) {
        Ok(input) => {
            retry_core_fuzz::names::check(input);
            Corpus::Keep
        }
        Err(_) => Corpus::Reject,
    }
});
