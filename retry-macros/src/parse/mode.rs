//! The retry mode: `mode = "standard" | "adaptive"`.
//!
//! Copy of `retry-core/src/config/mode.rs` (see [`super`]): same names, same message.

use super::name::named_values;

/// The runtime's `RetryMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryMode {
    Standard,
    Adaptive,
}

named_values!(RetryMode, "retry mode", "expected \"standard\" or \"adaptive\"", {
    Standard => "standard",
    Adaptive => "adaptive",
});
