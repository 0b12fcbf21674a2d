//! Reading a configuration name (a retry mode, a jitter, a preset): trimmed, ASCII case ignored.
//!
//! Copy of `retry-core/src/name.rs` (see [`super`]).

/// The one of `all` whose `name` is `value` once trimmed, ASCII case ignored; otherwise the
/// trimmed input, for the caller's error.
pub(crate) fn find_by_name<T: Copy, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
    value: &str,
) -> Result<T, String> {
    let trimmed = value.trim();
    all.into_iter()
        .find(|&item| name(item).eq_ignore_ascii_case(trimmed))
        .ok_or_else(|| trimmed.to_owned())
}
