//! Compile-fail and compile-pass tests of the macros, in one trybuild run (one build of the
//! dependencies): `ui/derive` (`#[derive(RetryInfo)]` errors), `ui/retryable` (`#[retryable]`
//! errors) and `ui/pass`. Regenerate the `.stderr` files with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/derive/*.rs");
    t.compile_fail("ui/retryable/*.rs");
    t.pass("ui/pass/*.rs");
}
