//! A demo server's script: the replies it gives, in order, the last one repeating.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The replies of a script and how many it has given.
#[derive(Debug)]
pub(crate) struct Script<T> {
    replies: Vec<T>,
    given: AtomicUsize,
}

impl<T> Script<T> {
    /// A script of `replies`; an empty one is `InvalidInput` (a server would have nothing to say).
    pub(crate) fn new(replies: Vec<T>) -> io::Result<Self> {
        if replies.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a script needs at least one reply",
            ));
        }
        Ok(Self {
            replies,
            given: AtomicUsize::new(0),
        })
    }

    /// The next reply: the first not given yet, or the last once all were given.
    pub(crate) fn next(&self) -> &T {
        let given = self.given.fetch_add(1, Ordering::Relaxed);
        // `new` refuses an empty script: the last index exists.
        &self.replies[given.min(self.replies.len() - 1)]
    }
}
