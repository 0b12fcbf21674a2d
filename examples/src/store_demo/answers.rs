//! What the newcomer's store answers, request by request, without the network: the layout of its
//! keys and objects, and the book of what it received, which decides each answer.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Which keys the store has, and how it misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLayout {
    /// Keys `0..keys` are read with `GET /keys/{n}`.
    pub keys: u32,
    /// A key `n` with `n % missing_every == 0` is unknown: 404, every time.
    pub missing_every: u32,
    /// The requests of each known key answered 503 before it is served.
    pub unavailable_first: u32,
    /// Every `throttled_every`-th request that would be served, counted over the whole store,
    /// is answered 429 with a `Retry-After` of [`retry_after`](Self::retry_after) instead.
    pub throttled_every: u32,
    /// The `Retry-After` of a 429, in whole seconds (its delta-seconds form).
    pub retry_after_secs: u32,
    /// Objects `0..objects` are written with `PUT /objects/{w}`.
    pub objects: u32,
    /// Every `reset_after_storing_every`-th `PUT` received, counted over the whole store, is
    /// stored and then its connection is reset without an answer.
    pub reset_after_storing_every: u32,
    /// Every `reset_before_storing_every`-th `PUT` received has its connection reset before it
    /// is stored (this wins when both apply).
    pub reset_before_storing_every: u32,
}

impl StoreLayout {
    /// The newcomer's store (issue 24): 200 keys, every 20th unknown (190 known), each known key
    /// answering 503 to its first 2 requests, every 8th would-be success a 429 with
    /// `Retry-After: 1`; 20 objects, every 3rd `PUT` reset after it was stored, every 7th
    /// before.
    pub const NEWCOMER: StoreLayout = StoreLayout {
        keys: 200,
        missing_every: 20,
        unavailable_first: 2,
        throttled_every: 8,
        retry_after_secs: 1,
        objects: 20,
        reset_after_storing_every: 3,
        reset_before_storing_every: 7,
    };

    /// Whether key `n` is unknown.
    pub fn is_missing(&self, n: u32) -> bool {
        n.is_multiple_of(self.missing_every)
    }

    /// The keys the store serves.
    pub fn served_keys(&self) -> u32 {
        (0..self.keys).filter(|&n| !self.is_missing(n)).count() as u32
    }

    /// The `Retry-After` of a 429.
    pub fn retry_after(&self) -> Duration {
        Duration::from_secs(u64::from(self.retry_after_secs))
    }
}

/// What a `GET` of a key is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetAnswer {
    /// 404: the key is unknown.
    NotFound,
    /// 429 with `Retry-After`.
    Throttled,
    /// 503.
    Unavailable,
    /// 200 with the value.
    Served,
}

/// What a `PUT` of an object is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutAnswer {
    /// Stored, and answered 200.
    Stored,
    /// Stored, then the connection is reset: the client cannot tell it was stored.
    StoredThenReset,
    /// The connection is reset before the object is stored.
    ResetBeforeStoring,
}

/// Every request the store received, which decides the next answer: shared by the HTTP store
/// and by tests that run the program without the network.
#[derive(Debug)]
pub struct StoreBook {
    layout: StoreLayout,
    /// `GET`s received, per key.
    gets: Vec<AtomicU32>,
    /// `GET`s answered 200, per key.
    served: Vec<AtomicU32>,
    /// `GET`s that would have been served, over the whole store.
    would_be_served: AtomicU32,
    /// `PUT`s received, per object.
    puts_received: Vec<AtomicU32>,
    /// `PUT`s stored, per object.
    puts_stored: Vec<AtomicU32>,
    /// `PUT`s received, over the whole store.
    put_requests: AtomicU32,
}

impl StoreBook {
    /// A store that has received nothing yet.
    pub fn new(layout: StoreLayout) -> Self {
        let counters = |n: u32| (0..n).map(|_| AtomicU32::new(0)).collect();
        Self {
            layout,
            gets: counters(layout.keys),
            served: counters(layout.keys),
            would_be_served: AtomicU32::new(0),
            puts_received: counters(layout.objects),
            puts_stored: counters(layout.objects),
            put_requests: AtomicU32::new(0),
        }
    }

    /// The store's layout.
    pub fn layout(&self) -> StoreLayout {
        self.layout
    }

    /// Receives a `GET` of key `n` (`None` for a key out of range) and answers it.
    pub fn get(&self, n: u32) -> Option<GetAnswer> {
        let request = self.gets.get(n as usize)?.fetch_add(1, Ordering::SeqCst);
        let layout = &self.layout;
        Some(if layout.is_missing(n) {
            GetAnswer::NotFound
        } else if request < layout.unavailable_first {
            GetAnswer::Unavailable
        } else {
            let would_be = self.would_be_served.fetch_add(1, Ordering::SeqCst) + 1;
            if would_be.is_multiple_of(layout.throttled_every) {
                GetAnswer::Throttled
            } else {
                self.served[n as usize].fetch_add(1, Ordering::SeqCst);
                GetAnswer::Served
            }
        })
    }

    /// Receives a `PUT` of object `w` (`None` for an object out of range) and answers it.
    pub fn put(&self, w: u32) -> Option<PutAnswer> {
        let received = self.puts_received.get(w as usize)?;
        received.fetch_add(1, Ordering::SeqCst);
        let request = self.put_requests.fetch_add(1, Ordering::SeqCst) + 1;
        let layout = &self.layout;
        if request.is_multiple_of(layout.reset_before_storing_every) {
            return Some(PutAnswer::ResetBeforeStoring);
        }
        self.puts_stored[w as usize].fetch_add(1, Ordering::SeqCst);
        Some(
            if request.is_multiple_of(layout.reset_after_storing_every) {
                PutAnswer::StoredThenReset
            } else {
                PutAnswer::Stored
            },
        )
    }

    /// The `GET`s key `n` received (0 for a key out of range).
    pub fn gets(&self, n: u32) -> u32 {
        count(&self.gets, n)
    }

    /// The `PUT`s object `w` received (0 for an object out of range).
    pub fn puts_received(&self, w: u32) -> u32 {
        count(&self.puts_received, w)
    }

    /// The times object `w` was stored (0 for an object out of range).
    pub fn puts_stored(&self, w: u32) -> u32 {
        count(&self.puts_stored, w)
    }

    /// The `GET`s of key `n` answered 200 (0 for a key out of range).
    pub fn served(&self, n: u32) -> u32 {
        count(&self.served, n)
    }

    /// Every `GET` received.
    pub fn get_requests(&self) -> u32 {
        sum(&self.gets)
    }

    /// Every `PUT` received.
    pub fn put_requests(&self) -> u32 {
        self.put_requests.load(Ordering::SeqCst)
    }
}

fn count(counters: &[AtomicU32], n: u32) -> u32 {
    counters
        .get(n as usize)
        .map_or(0, |counter| counter.load(Ordering::SeqCst))
}

fn sum(counters: &[AtomicU32]) -> u32 {
    counters
        .iter()
        .map(|counter| counter.load(Ordering::SeqCst))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_answer_503_twice_and_every_8th_would_be_success_429() {
        let book = StoreBook::new(StoreLayout::NEWCOMER);
        assert_eq!(StoreLayout::NEWCOMER.served_keys(), 190);
        use GetAnswer::*;
        assert_eq!(book.get(0), Some(NotFound));
        assert_eq!(book.get(0), Some(NotFound));
        assert_eq!(book.get(200), None);
        // Keys 1 to 8, each asked until it is answered 200 or 429: the 8th request that would
        // have been served (key 8's third) is throttled, and the next one served.
        let answers = |n| (0..3).map(|_| book.get(n)).collect::<Vec<_>>();
        for n in 1..=7 {
            assert_eq!(
                answers(n),
                [Some(Unavailable), Some(Unavailable), Some(Served)]
            );
        }
        assert_eq!(
            answers(8),
            [Some(Unavailable), Some(Unavailable), Some(Throttled)]
        );
        assert_eq!(book.get(8), Some(Served));
        assert_eq!((book.gets(8), book.served(8)), (4, 1));
        assert_eq!((book.get_requests(), book.served(0)), (27, 0));
    }

    #[test]
    fn every_3rd_put_is_reset_after_storing_and_every_7th_before() {
        let book = StoreBook::new(StoreLayout::NEWCOMER);
        let answers: Vec<_> = (0..20).map(|w| book.put(w).expect("an object")).collect();
        let at = |answer| {
            (1..=20)
                .filter(|&r| answers[r as usize - 1] == answer)
                .collect::<Vec<u32>>()
        };
        assert_eq!(at(PutAnswer::ResetBeforeStoring), [7, 14]);
        assert_eq!(at(PutAnswer::StoredThenReset), [3, 6, 9, 12, 15, 18]);
        assert_eq!((0..20).map(|w| book.puts_stored(w)).sum::<u32>(), 18);
        assert_eq!(book.puts_stored(6), 0, "the 7th PUT was not stored");
        assert_eq!(book.put(20), None);
        assert_eq!(book.put_requests(), 20);
    }
}
