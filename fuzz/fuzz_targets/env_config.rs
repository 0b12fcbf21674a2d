//! `RetryConfig::from_lookup` on `NAME=value` lines: see `retry_core_fuzz::env_config::check`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| retry_core_fuzz::env_config::check(data));
