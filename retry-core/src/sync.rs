//! Atomics and locks, swapped for loom's under `--cfg loom` so the quota and the request rate
//! can be model-checked.

#[cfg(loom)]
pub(crate) use loom::sync::{
    Mutex, TryLockError,
    atomic::{AtomicU64, Ordering},
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    Mutex, TryLockError,
    atomic::{AtomicU64, Ordering},
};
