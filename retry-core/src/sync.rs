//! Atomics and locks, swapped for loom's under `--cfg loom` so the quota and the request rate
//! can be model-checked.

// loom's `Mutex::try_lock` reports with std's error type.
pub(crate) use std::sync::TryLockError;

#[cfg(loom)]
pub(crate) use loom::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering},
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering},
};
