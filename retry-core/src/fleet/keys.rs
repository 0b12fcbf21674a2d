//! The store's keys for one fleet scope: `<prefix>{<scope>}:v1:state`, `...:procs` and
//! `...:seen`, the scope's name percent-encoded inside a Redis Cluster hash tag so that the
//! three keys live on one shard (Redis docs, "Redis cluster specification", hash tags).
//!
//! Hidden from the documentation: not part of the stable API. [`Fleet`](super::Fleet) uses it;
//! the repository's tests and tools reach it to drive the store directly.

use super::error::FleetError;
use super::protocol::PROTOCOL_VERSION;

/// The key prefix when none is set.
pub const DEFAULT_PREFIX: &str = "retry:";

/// The longest scope name or prefix, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// The three keys of one fleet scope.
///
/// ```
/// use retry_core::fleet::keys::ScopeKeys;
/// let keys = ScopeKeys::new("retry:", "inventory").unwrap();
/// assert_eq!(keys.state(), "retry:{inventory}:v1:state");
/// assert_eq!(keys.procs(), "retry:{inventory}:v1:procs");
/// assert_eq!(keys.seen(), "retry:{inventory}:v1:seen");
/// // Any name is safe: bytes outside [A-Za-z0-9._-] are percent-encoded.
/// let odd = ScopeKeys::new("retry:", "a {b}/ç").unwrap();
/// assert_eq!(odd.state(), "retry:{a%20%7Bb%7D%2F%C3%A7}:v1:state");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScopeKeys {
    prefix: String,
    scope: String,
    state: String,
    procs: String,
    seen: String,
}

impl ScopeKeys {
    /// The keys of scope `scope` under `prefix`. The prefix must be 1 to 200 bytes of
    /// `[A-Za-z0-9._:-]` (no braces: the hash tag is the scope's); the scope's name 1 to 200
    /// bytes of anything.
    ///
    /// ```
    /// use retry_core::fleet::keys::ScopeKeys;
    /// assert_eq!(
    ///     ScopeKeys::new("retry:", "").unwrap_err().to_string(),
    ///     "fleet key: the scope name is empty: name the scope"
    /// );
    /// assert!(ScopeKeys::new("{retry}", "inventory").is_err());
    /// ```
    pub fn new(prefix: &str, scope: &str) -> Result<Self, FleetError> {
        check_prefix(prefix)?;
        let encoded = encode_scope(scope)?;
        let base = format!("{prefix}{{{encoded}}}:v{PROTOCOL_VERSION}:");
        Ok(Self {
            prefix: prefix.to_owned(),
            scope: scope.to_owned(),
            state: format!("{base}state"),
            procs: format!("{base}procs"),
            seen: format!("{base}seen"),
        })
    }

    /// The prefix the keys are under.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The scope's name, as given.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The hash of the scope's fleet state.
    pub fn state(&self) -> &str {
        &self.state
    }

    /// The hash of its processes' records (process id to record).
    pub fn procs(&self) -> &str {
        &self.procs
    }

    /// The sorted set of its processes by when they were last seen (for expiry).
    pub fn seen(&self) -> &str {
        &self.seen
    }

    /// The three keys in the order the script takes them (`KEYS[1..=3]`).
    pub fn all(&self) -> [&str; 3] {
        [&self.state, &self.procs, &self.seen]
    }
}

/// Checks a key prefix: 1 to 200 bytes of `[A-Za-z0-9._:-]`.
///
/// ```
/// use retry_core::fleet::keys::check_prefix;
/// assert!(check_prefix("myapp:retry:").is_ok());
/// assert_eq!(
///     check_prefix("my app").unwrap_err().to_string(),
///     "fleet key: the prefix \"my app\" has ' ' at byte 2: use letters, digits and . _ : - only"
/// );
/// ```
pub fn check_prefix(prefix: &str) -> Result<(), FleetError> {
    let invalid = |reason: String| FleetError::InvalidKey { reason };
    if prefix.is_empty() {
        return Err(invalid(
            "the prefix is empty: keep the default \"retry:\" or name one".into(),
        ));
    }
    if prefix.len() > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "the prefix is {} bytes long, at most {MAX_NAME_BYTES}",
            prefix.len()
        )));
    }
    match prefix
        .char_indices()
        .find(|(_, c)| !(is_unreserved(*c) || *c == ':'))
    {
        Some((at, c)) => Err(invalid(format!(
            "the prefix {prefix:?} has {c:?} at byte {at}: use letters, digits and . _ : - only"
        ))),
        None => Ok(()),
    }
}

/// A scope's name as a key part: `[A-Za-z0-9._-]` kept, every other byte `%XX` (uppercase hex,
/// as RFC 3986 percent-encoding), so braces, spaces, control characters and non-ASCII are safe
/// and two names never share an encoding. Empty names and names over 200 bytes are errors.
///
/// ```
/// use retry_core::fleet::keys::encode_scope;
/// assert_eq!(encode_scope("orders-v2.eu_west").unwrap(), "orders-v2.eu_west");
/// assert_eq!(encode_scope("50%").unwrap(), "50%25");
/// assert!(encode_scope(&"x".repeat(201)).is_err());
/// ```
pub fn encode_scope(scope: &str) -> Result<String, FleetError> {
    if scope.is_empty() {
        return Err(FleetError::InvalidKey {
            reason: "the scope name is empty: name the scope".into(),
        });
    }
    if scope.len() > MAX_NAME_BYTES {
        return Err(FleetError::InvalidKey {
            reason: format!(
                "the scope name is {} bytes long, at most {MAX_NAME_BYTES}: choose a shorter name",
                scope.len()
            ),
        });
    }
    let mut encoded = String::with_capacity(scope.len());
    for byte in scope.bytes() {
        if is_unreserved(char::from(byte)) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    Ok(encoded)
}

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_differ_have_keys_that_differ() {
        let names = ["a b", "a%20b", "a+b", "a{b", "a}b", "A b", "ä", "a\nb"];
        let keys: std::collections::BTreeSet<String> = names
            .iter()
            .map(|name| ScopeKeys::new("retry:", name).expect("valid").state)
            .collect();
        assert_eq!(keys.len(), names.len());
    }

    #[test]
    fn the_hash_tag_is_the_encoded_scope_alone() {
        let keys = ScopeKeys::new("app:retry:", "x}{y").expect("valid");
        for key in keys.all() {
            let open = key.find('{').expect("a tag");
            let close = key[open..].find('}').expect("closed") + open;
            assert_eq!(&key[open + 1..close], "x%7D%7By");
        }
    }

    #[test]
    fn lengths_are_bounded_in_bytes() {
        assert!(encode_scope(&"é".repeat(100)).is_ok()); // 200 bytes
        assert!(encode_scope(&"é".repeat(101)).is_err());
        assert!(check_prefix(&"p".repeat(200)).is_ok());
        assert!(check_prefix(&"p".repeat(201)).is_err());
        assert!(check_prefix("").is_err());
    }
}
