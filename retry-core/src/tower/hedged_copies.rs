//! The copies of a hedged tower call: each one a copy of the request sent to a clone of the
//! service once that clone is ready ([`ReadyCall`]), made by [`CopySender`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tower_service::Service;

use super::CopyRequest;
use super::request_info::{RequestInfo, mark_attempt};
use super::shared::Shared;
use crate::attempt::Attempt;
use crate::driver::hedged::MakeCopy;

pin_project! {
    /// One copy in flight: waits for its service's readiness, calls it, then waits for the
    /// response. Dropping it drops the service's future (an HTTP client closes its connection).
    #[project = ReadyCallProj]
    pub(super) enum ReadyCall<Svc, Req>
    where
        Svc: Service<Req>,
    {
        /// The service has not said it is ready yet.
        Readying { service: Svc, request: Option<Req> },
        /// The service was called.
        Called { #[pin] future: Svc::Future },
    }
}

impl<Svc: Service<Req>, Req> Future for ReadyCall<Svc, Req> {
    type Output = Result<Svc::Response, Svc::Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project() {
                ReadyCallProj::Readying { service, request } => {
                    ready!(service.poll_ready(cx))?;
                    let Some(request) = request.take() else {
                        unreachable!("retry_core: a hedged copy called twice")
                    };
                    let future = service.call(request);
                    self.set(ReadyCall::Called { future });
                }
                ReadyCallProj::Called { future } => return future.poll(cx),
            }
        }
    }
}

/// Makes each copy of one hedged call: the request copied by the layer's copy hook, marked with
/// its attempt, sent to a clone of the service. When the hook cannot copy it again, the kept
/// request itself is the last copy (as without hedging).
pub(super) struct CopySender<Svc, Req, S, C, P, L> {
    pub(super) shared: Arc<Shared<S, C, P, L>>,
    pub(super) service: Svc,
    /// The request the copies are made from; taken when it is sent itself.
    pub(super) request: Option<Req>,
    /// The next copy, made by `prepare`.
    pub(super) next: Option<Req>,
}

impl<Svc, Req, S, C, P, L> MakeCopy for CopySender<Svc, Req, S, C, P, L>
where
    Svc: Service<Req> + Clone,
    Req: RequestInfo,
    P: CopyRequest<Req>,
{
    type Copy = ReadyCall<Svc, Req>;

    fn prepare(&mut self) -> bool {
        if self.next.is_some() {
            return true;
        }
        let copy = self
            .request
            .as_ref()
            .and_then(|request| self.shared.copy.copy_request(request));
        self.next = copy.or_else(|| self.request.take());
        self.next.is_some()
    }

    fn make(&mut self, attempt: Attempt) -> ReadyCall<Svc, Req> {
        let mut request = match self.next.take() {
            Some(request) => Some(request),
            None => self.prepare().then(|| self.next.take()).flatten(),
        };
        if let Some(request) = request.as_mut() {
            mark_attempt(request, attempt);
        }
        ReadyCall::Readying {
            service: self.service.clone(),
            request,
        }
    }
}
