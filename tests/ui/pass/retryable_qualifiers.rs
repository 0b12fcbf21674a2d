//! The qualifiers the expansion supports: `unsafe fn` (async and blocking: the body keeps its
//! own `unsafe` blocks) and an `extern "C"` blocking `fn`. (`const fn` is rejected:
//! `ui/retryable/const_fn.rs`.)
#![deny(warnings)]

use retry_core::{RetryInfo, RetrySafety, retryable};

#[derive(Debug)]
pub struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// # Safety
/// `pointer` must be valid for reads.
#[retryable(max_attempts = 2)]
async unsafe fn read(pointer: *const u32) -> Result<u32, StoreError> {
    // SAFETY: the caller's promise.
    Ok(unsafe { *pointer })
}

/// # Safety
/// `pointer` must be valid for reads.
#[retryable(max_attempts = 2)]
unsafe fn read_blocking(pointer: *const u32) -> Result<u32, StoreError> {
    // SAFETY: the caller's promise.
    Ok(unsafe { *pointer })
}

#[allow(improper_ctypes_definitions)]
#[retryable(max_attempts = 2)]
extern "C" fn fetch() -> Result<u32, StoreError> {
    Ok(42)
}

fn main() {
    let value = 7;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    // SAFETY: `value` outlives both calls.
    let read = runtime.block_on(unsafe { read(&value) });
    assert_eq!(read.ok(), Some(7));
    // SAFETY: as above.
    assert_eq!(unsafe { read_blocking(&value) }.ok(), Some(7));
    assert_eq!(fetch().ok(), Some(42));
}
