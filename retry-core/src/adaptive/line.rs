//! The rate limiter's line of waiting callers, first come, first served, and their tickets.

use std::collections::VecDeque;
use std::time::Duration;

/// The longest a waiting caller sleeps before it asks again, even when its turn is further
/// away: a fill rate raised meanwhile (CUBIC recovering) then reaches sleepers within one
/// measurement bucket, instead of them sleeping out a wait computed at a lower rate.
pub(crate) const MAX_SLEEP_BEFORE_RECHECK: Duration = Duration::from_millis(500);

/// How long a waiter keeps its place without asking again: four re-check intervals. A waiter
/// told to wait asks again within [`MAX_SLEEP_BEFORE_RECHECK`]; one silent for longer than this
/// is taken to be gone (a token dropped without `abandon`), so that it cannot hold the line.
pub(crate) const WAITER_LEASE: Duration =
    Duration::from_millis(4 * MAX_SLEEP_BEFORE_RECHECK.as_millis() as u64);

/// A waiter's place in the limiter's line as a plain number, so that the retry token that
/// carries it owns nothing; `NONE` when the holder is not waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket(pub(super) u64);

impl Ticket {
    /// No place in line.
    pub(crate) const NONE: Ticket = Ticket(0);

    pub(super) fn of(number: u64) -> Self {
        Ticket(number + 1)
    }

    pub(crate) fn is_none(self) -> bool {
        self.0 == 0
    }

    pub(super) fn number(self) -> Option<u64> {
        self.0.checked_sub(1)
    }
}

/// One waiting caller.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    number: u64,
    /// When it last asked, in the limiter's seconds.
    last_seen: f64,
}

/// The waiters in ticket order (tickets are handed out in increasing order, so joining at the
/// end keeps the line sorted). A waiter's place is its index: the number of waiters still in
/// line ahead of it, exact whoever leaves. Binary search finds a ticket; waiters are granted
/// near the head, where removing is cheap.
#[derive(Debug, Clone, Default)]
pub(crate) struct Line {
    waiters: VecDeque<Waiter>,
    /// The next ticket's number.
    issued: u64,
}

impl Line {
    /// Waiters in line.
    pub(crate) fn len(&self) -> usize {
        self.waiters.len()
    }

    /// A new waiter joins at the end, at `now`: its ticket.
    pub(crate) fn join(&mut self, now: f64) -> Ticket {
        let number = self.issued;
        self.issued += 1;
        self.waiters.push_back(Waiter {
            number,
            last_seen: now,
        });
        Ticket::of(number)
    }

    /// The place of ticket `number`, renewing its lease at `now`; `None` when it is not in line
    /// (its lease lapsed).
    pub(crate) fn find(&mut self, number: u64, now: f64) -> Option<usize> {
        let index = self.index(number)?;
        self.waiters[index].last_seen = now;
        Some(index)
    }

    /// Removes the waiter at `index` (granted).
    pub(crate) fn remove(&mut self, index: usize) {
        self.waiters.remove(index);
    }

    /// Ticket `number` gives its place up (if it still has one).
    pub(crate) fn leave(&mut self, number: u64) {
        if let Some(index) = self.index(number) {
            self.waiters.remove(index);
        }
    }

    /// Drops the waiters at the head whose lease lapsed before `now`.
    pub(crate) fn expire(&mut self, now: f64) {
        let lease = WAITER_LEASE.as_secs_f64();
        while let Some(head) = self.waiters.front() {
            if now - head.last_seen <= lease {
                break;
            }
            self.waiters.pop_front();
        }
    }

    /// The place of ticket `number`, without renewing its lease.
    pub(crate) fn place(&self, number: u64) -> Option<usize> {
        self.index(number)
    }

    fn index(&self, number: u64) -> Option<usize> {
        self.waiters
            .binary_search_by_key(&number, |waiter| waiter.number)
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_count_the_waiters_still_ahead_whoever_leaves() {
        let mut line = Line::default();
        let tickets: Vec<u64> = (0..4)
            .map(|_| line.join(0.0).number().expect("a ticket"))
            .collect();
        line.leave(tickets[3]);
        line.leave(tickets[0]);
        assert_eq!(line.find(tickets[1], 0.1), Some(0));
        assert_eq!(line.find(tickets[2], 0.1), Some(1));
        assert_eq!(line.len(), 2);
        line.leave(tickets[0]); // twice: nothing
        assert_eq!(line.len(), 2);
    }

    #[test]
    fn a_silent_waiter_leaves_when_it_reaches_the_head_and_its_lease_lapsed() {
        let mut line = Line::default();
        let silent = line.join(0.0).number().expect("a ticket");
        let asking = line.join(0.0).number().expect("a ticket");
        let lease = WAITER_LEASE.as_secs_f64();
        assert_eq!(line.find(asking, lease), Some(1));
        line.expire(lease);
        assert_eq!(line.len(), 2, "at the lease's end: still in line");
        line.expire(lease + 0.001);
        assert_eq!(line.find(silent, lease + 0.001), None, "lapsed");
        assert_eq!(line.find(asking, lease + 0.001), Some(0));
    }
}
