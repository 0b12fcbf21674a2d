//! The readable input format of the structured targets: `name=value` lines.
//!
//! A seed file such as
//!
//! ```text
//! now=784111767
//! retry-after=Sun, 06 Nov 1994 08:49:37 GMT
//! ```
//!
//! is written by hand, and libFuzzer's byte mutations keep most of its structure. A line without
//! `=` is skipped; a value runs to the end of its line, so it holds any byte but `\n`.

/// The `name=value` pairs of `data`, in order: the name is the text before the first `=`.
///
/// ```
/// let pairs: Vec<_> = retry_core_fuzz::lines::pairs(b"a=1\nskipped\nb==2\n").collect();
/// assert_eq!(pairs, [(&b"a"[..], &b"1"[..]), (&b"b"[..], &b"=2"[..])]);
/// ```
pub fn pairs(data: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    data.split(|&byte| byte == b'\n').filter_map(|line| {
        let at = line.iter().position(|&byte| byte == b'=')?;
        Some((&line[..at], &line[at + 1..]))
    })
}

/// The value of the first `name` line, if any.
pub fn first<'a>(data: &'a [u8], name: &str) -> Option<&'a [u8]> {
    pairs(data).find_map(|(key, value)| (key == name.as_bytes()).then_some(value))
}

/// `value` as a number if it is one (for the targets' own settings such as `now=`).
pub fn number<T: std::str::FromStr>(value: &[u8]) -> Option<T> {
    std::str::from_utf8(value).ok()?.trim().parse().ok()
}
