//! Integration and compile-fail tests of `retry-core` and `retry-macros`, and the fixtures they
//! share.

pub mod redis_server;
pub mod test_ca;
