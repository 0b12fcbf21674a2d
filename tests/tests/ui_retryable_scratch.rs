//! TEMPORARY (retryable helper): ui cases of `#[retryable]` only. Deleted before hand-off.
#[test]
fn ui_retryable() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/retryable/*.rs");
    t.pass("ui/pass/retryable_*.rs");
}
