//! The answer to a request for a send permit, as callers outside the crate hold it:
//! [`Admission`], and a waiter's place as a [`Reservation`] that gives the place up when dropped.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::limiter::{ClientRateLimiter, TicketAdmission};
use super::line::Ticket;

/// The answer to a request for a send permit.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// assert!(matches!(limiter.try_acquire(None, Duration::ZERO), Admission::Granted));
/// ```
#[derive(Debug)]
pub enum Admission {
    /// The permit is granted: send now.
    Granted,
    /// No permit yet: sleep `wait`, then ask again with the reservation.
    Wait {
        /// How long to sleep before asking again (at most 500 ms).
        wait: Duration,
        /// How long until this caller's permit, at the current fill rate.
        expected: Duration,
        /// The caller's place in the queue; dropping it gives the place up.
        reservation: Reservation,
    },
}

/// A waiting caller's ticket. Pass it back to [`try_acquire`](ClientRateLimiter::try_acquire)
/// after the wait; dropping it (a cancelled call) gives the place up, so a cancelled waiter
/// never holds permits.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// limiter.record_response(true, Duration::ZERO, Duration::ZERO);
/// let Admission::Wait { reservation, .. } = limiter.try_acquire(None, Duration::ZERO) else {
///     unreachable!()
/// };
/// assert_eq!(limiter.stats().waiting, 1);
/// drop(reservation);
/// assert_eq!(limiter.stats().waiting, 0);
/// ```
pub struct Reservation {
    /// `None` once the ticket was handed back to the limiter.
    limiter: Option<Arc<ClientRateLimiter>>,
    ticket: Ticket,
}

impl Reservation {
    /// The ticket, handed back to the limiter: the drop then gives nothing up.
    fn into_ticket(mut self) -> Ticket {
        self.limiter = None;
        self.ticket
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(limiter) = self.limiter.take() {
            limiter.give_up(self.ticket);
        }
    }
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("ticket", &self.ticket)
            .finish()
    }
}

impl ClientRateLimiter {
    /// Asks for one send permit at `now`. `reservation` is the ticket a previous
    /// [`Admission::Wait`] handed out, if this caller has waited already.
    ///
    /// The permit is deducted only when granted, and only from permits not owed to waiters
    /// ahead: a newcomer queues behind every waiter, a returning waiter behind those with older
    /// tickets. A caller that must wait is told when its permit is expected,
    /// `(ahead + 1 - capacity) / fill_rate`, and sleeps at most 500 ms before it asks again.
    ///
    /// ```
    /// use retry_core::adaptive::{Admission, ClientRateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_response(true, Duration::ZERO, Duration::ZERO); // bucket on, 0 permits, 0.5/s
    /// let Admission::Wait { wait, expected, reservation } = limiter.try_acquire(None, Duration::ZERO)
    /// else {
    ///     unreachable!()
    /// };
    /// assert_eq!(expected, Duration::from_secs(2));
    /// assert_eq!(wait, Duration::from_millis(500));
    /// assert!(matches!(
    ///     limiter.try_acquire(Some(reservation), expected),
    ///     Admission::Granted
    /// ));
    /// assert_eq!(limiter.stats().capacity, 0.0);
    /// ```
    pub fn try_acquire(
        self: &Arc<Self>,
        reservation: Option<Reservation>,
        now: Duration,
    ) -> Admission {
        let ticket = reservation.map_or(Ticket::NONE, Reservation::into_ticket);
        match self.acquire(ticket, now) {
            TicketAdmission::Granted => Admission::Granted,
            TicketAdmission::Wait {
                wait,
                expected,
                ticket,
            } => Admission::Wait {
                wait,
                expected,
                reservation: Reservation {
                    limiter: Some(Arc::clone(self)),
                    ticket,
                },
            },
        }
    }
}
