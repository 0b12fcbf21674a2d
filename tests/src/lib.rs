//! Integration and compile-fail tests of `retry-core` and `retry-macros` (no library code).
