//! `HttpStatusClassifier` on an `http::Response` made of `name=value` lines: see
//! `retry_core_fuzz::classifier::check`.
#![no_main]

use libfuzzer_sys::{Corpus, fuzz_target};

fuzz_target!(|data: &[u8]| -> Corpus {
    match retry_core_fuzz::classifier::check(data) {
        Some(()) => Corpus::Keep,
        None => Corpus::Reject,
    }
});
