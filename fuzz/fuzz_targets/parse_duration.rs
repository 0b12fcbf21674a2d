//! `retry_core::config::parse_duration` on any UTF-8 text: see `retry_core_fuzz::duration::check`.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    match std::str::from_utf8(data) {
        Ok(input) => {
            retry_core_fuzz::duration::check(input);
            Corpus::Keep
        }
        Err(_) => Corpus::Reject,
    }
});
