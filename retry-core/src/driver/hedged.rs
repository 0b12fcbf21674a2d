//! The future of a hedged call ([`Hedged`]): a [`HedgedLoop`] driven on tokio's timer, its
//! copies made by a closure and polled together.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::hedged_loop::{HedgedLoop, Next};
use super::hook::OnRetry;
use super::shed::ShedInto;
use crate::attempt::{self, Attempt, CallStats, Mark};
use crate::classify::ClassifyRetry;
use crate::strategy::RetryStrategy;

pin_project! {
    /// One copy in flight: the operation's future, polled in its attempt's context (a hedge's
    /// or a retry's span, `attempt::current()`).
    struct InFlightCopy<Fut> {
        #[pin]
        future: Fut,
        attempt: Attempt,
        mark: Mark,
        span: Option<tracing::Span>,
    }
}

impl<Fut: Future> InFlightCopy<Fut> {
    /// Polls the copy in its context.
    fn poll_in_context(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let this = self.project();
        let future = this.future;
        attempt::in_context(*this.mark, this.span.as_ref(), || future.poll(cx))
    }
}

/// Makes the copies of a hedged call: its first attempt, its hedges, its retries.
pub(crate) trait MakeCopy {
    /// One copy in flight.
    type Copy: Future;

    /// Whether another copy can be made. Asked before a hedge is requested and before a retry
    /// waits: `false` stops the call's hedging, and ends the call at a retry with the outcome
    /// before it.
    fn prepare(&mut self) -> bool {
        true
    }

    /// The copy that is `attempt`, sent now (called in the attempt's context).
    fn make(&mut self, attempt: Attempt) -> Self::Copy;
}

/// A closure makes every copy.
impl<F: FnMut() -> Fut, Fut: Future> MakeCopy for F {
    type Copy = Fut;

    fn make(&mut self, _attempt: Attempt) -> Fut {
        self()
    }
}

/// Where the call is between its copies.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Before the first attempt or a retry: its backoff, then its send permit.
    Waiting {
        backoff_considered: bool,
        sleeping: bool,
    },
    /// Copies in flight; the timer, when armed, is the next hedge's.
    Running { hedge_armed: bool },
    /// The call's outcome was returned.
    Done,
}

pin_project! {
    /// The future of a hedged call: resolves to the outcome that ended it, the call's
    /// [`CallStats`], and what to sleep before returning the outcome (a long-polling call's
    /// wait; [`Settled`](super::linger::Settled) sleeps it).
    ///
    /// Its first copy is held in place; hedges and copies sent beside another are boxed (the
    /// hedged path; a call whose first attempt answers before the hedge delay allocates
    /// nothing). Every copy is polled when the future is woken. One timer serves the waits
    /// before an attempt and the hedge delay, which never overlap. Dropping the future drops
    /// its copies (cancels them) and settles them.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub(crate) struct Hedged<S, C, H, L, F>
    where
        S: RetryStrategy,
        F: MakeCopy,
    {
        #[pin]
        first: Option<InFlightCopy<F::Copy>>,
        others: Vec<Pin<Box<InFlightCopy<F::Copy>>>>,
        #[pin]
        timer: Option<Sleep>,
        phase: Phase,
        operation: F,
        call: HedgedLoop<S, C, H, L>,
        // The outcome a retry follows, kept until the retry is sent: the call's outcome should
        // no copy of the request be left to send.
        before_retry: Option<<F::Copy as Future>::Output>,
    }
}

impl<S, C, H, L, F> Hedged<S, C, H, L, F>
where
    S: RetryStrategy,
    F: MakeCopy,
{
    /// The call `call`, each copy made by `operation` (called in the copy's context).
    pub(crate) fn new(call: HedgedLoop<S, C, H, L>, operation: F) -> Self {
        Self {
            first: None,
            others: Vec::new(),
            timer: None,
            phase: Phase::Waiting {
                backoff_considered: false,
                sleeping: false,
            },
            operation,
            call,
            before_retry: None,
        }
    }
}

/// Starts `timer` for `wait`, reusing it when it exists.
fn arm(mut timer: Pin<&mut Option<Sleep>>, wait: Duration) {
    let deadline = Instant::now() + wait;
    match timer.as_mut().as_pin_mut() {
        Some(sleep) => sleep.reset(deadline),
        None => timer.set(Some(tokio::time::sleep_until(deadline))),
    }
}

/// Polls `timer` (ready when there is none).
fn poll_timer(timer: Pin<&mut Option<Sleep>>, cx: &mut Context<'_>) -> Poll<()> {
    match timer.as_pin_mut() {
        Some(sleep) => sleep.poll(cx),
        None => Poll::Ready(()),
    }
}

impl<S, C, H, L, F, T, E> Future for Hedged<S, C, H, L, F>
where
    S: RetryStrategy,
    C: ClassifyRetry<T, E>,
    H: OnRetry<E>,
    L: ShedInto<E>,
    F: MakeCopy,
    F::Copy: Future<Output = Result<T, E>>,
    E: Debug,
{
    type Output = (Result<T, E>, CallStats, Option<Duration>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            match *this.phase {
                Phase::Waiting {
                    backoff_considered,
                    sleeping,
                } => {
                    if sleeping {
                        ready!(poll_timer(this.timer.as_mut(), cx));
                    }
                    if let Some(refusal) = this.call.refuse() {
                        *this.phase = Phase::Done;
                        let refused = Err(L::into_error(refusal));
                        return Poll::Ready((refused, this.call.stats(), None));
                    }
                    if !backoff_considered
                        && let Some(outcome) = this.before_retry.take()
                        && !this.operation.prepare()
                    {
                        // No copy of the request left to send: the retry is given up and the
                        // outcome before it returned.
                        this.call.give_up_unsent();
                        *this.phase = Phase::Done;
                        return Poll::Ready((outcome, this.call.stats(), None));
                    }
                    match this.call.next_wait(!backoff_considered) {
                        Some(wait) => {
                            this.call.count_wait(wait);
                            arm(this.timer.as_mut(), wait);
                            *this.phase = Phase::Waiting {
                                backoff_considered: true,
                                sleeping: true,
                            };
                        }
                        None => {
                            let Some(attempt) = this.call.attempt() else {
                                unreachable_state()
                            };
                            let copy = make_copy(this.call, this.operation, attempt);
                            place(this.first.as_mut(), this.others, copy);
                            let hedge_armed = arm_hedge(this.call, this.timer.as_mut());
                            *this.phase = Phase::Running { hedge_armed };
                        }
                    }
                }
                Phase::Running { hedge_armed } => {
                    if let Poll::Ready((attempt, outcome)) =
                        poll_copies(this.first.as_mut(), this.others, cx)
                    {
                        match this.call.finish(attempt, &outcome) {
                            Next::Return => {
                                // The other copies are dropped now: their requests cancelled.
                                this.first.set(None);
                                this.others.clear();
                                this.timer.set(None);
                                *this.phase = Phase::Done;
                                let linger = this.call.take_linger();
                                return Poll::Ready((outcome, this.call.stats(), linger));
                            }
                            Next::Retry => {
                                *this.before_retry = Some(outcome);
                                *this.phase = Phase::Waiting {
                                    backoff_considered: false,
                                    sleeping: false,
                                };
                            }
                            Next::Wait => {}
                        }
                        continue;
                    }
                    if !hedge_armed || poll_timer(this.timer.as_mut(), cx).is_pending() {
                        return Poll::Pending;
                    }
                    // The hedge delay passed with no answer that ended the call.
                    let mut hedge_armed = false;
                    if !this.operation.prepare() {
                        this.call.stop_hedging();
                    } else if let Ok(attempt) = this.call.try_hedge() {
                        let copy = make_copy(this.call, this.operation, attempt);
                        place(this.first.as_mut(), this.others, copy);
                        hedge_armed = arm_hedge(this.call, this.timer.as_mut());
                    }
                    *this.phase = Phase::Running { hedge_armed };
                }
                Phase::Done => {
                    panic!("retry_core: a hedged call's future polled after it completed")
                }
            }
        }
    }
}

/// The copy of `attempt`: `operation` called in its context.
fn make_copy<S: RetryStrategy, C, H, L, F: MakeCopy>(
    call: &HedgedLoop<S, C, H, L>,
    operation: &mut F,
    attempt: Attempt,
) -> InFlightCopy<F::Copy> {
    let (mark, span) = call.context_of(attempt);
    let future = attempt::in_context(mark, span.as_ref(), || operation.make(attempt));
    InFlightCopy {
        future,
        attempt,
        mark,
        span,
    }
}

/// Puts `copy` in the first slot if it is free, else beside it, boxed.
fn place<Fut>(
    mut first: Pin<&mut Option<InFlightCopy<Fut>>>,
    others: &mut Vec<Pin<Box<InFlightCopy<Fut>>>>,
    copy: InFlightCopy<Fut>,
) {
    if first.as_mut().as_pin_mut().is_none() {
        first.set(Some(copy));
    } else {
        others.push(Box::pin(copy));
    }
}

/// Arms `timer` for the next hedge, if one is due: whether it was.
fn arm_hedge<S: RetryStrategy, C, H, L>(
    call: &mut HedgedLoop<S, C, H, L>,
    timer: Pin<&mut Option<Sleep>>,
) -> bool {
    match call.hedge_wait() {
        Some(delay) => {
            arm(timer, delay);
            true
        }
        None => false,
    }
}

/// Polls every copy in flight: the first that answered (taken out), with its attempt.
fn poll_copies<Fut: Future>(
    mut first: Pin<&mut Option<InFlightCopy<Fut>>>,
    others: &mut Vec<Pin<Box<InFlightCopy<Fut>>>>,
    cx: &mut Context<'_>,
) -> Poll<(Attempt, Fut::Output)> {
    if let Some(copy) = first.as_mut().as_pin_mut() {
        let attempt = copy.attempt;
        if let Poll::Ready(outcome) = copy.poll_in_context(cx) {
            first.set(None);
            return Poll::Ready((attempt, outcome));
        }
    }
    for index in 0..others.len() {
        let attempt = others[index].attempt;
        if let Poll::Ready(outcome) = others[index].as_mut().poll_in_context(cx) {
            drop(others.swap_remove(index));
            return Poll::Ready((attempt, outcome));
        }
    }
    Poll::Pending
}

/// A call whose attempt may be sent has one: `next_wait` grants only a token it holds.
#[cold]
fn unreachable_state() -> ! {
    unreachable!("retry_core: a hedged call sent an attempt it does not hold")
}
