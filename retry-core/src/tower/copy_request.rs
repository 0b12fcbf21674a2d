//! How a retry gets its own copy of the request.

/// Makes the copy of a request that a retry sends: the first attempt consumes the caller's
/// request, so a retry needs one made before. `None` means the request cannot be sent again: the
/// call is then not retried.
///
/// Implemented by [`CloneRequest`] (the default of [`RetryLayer`](super::RetryLayer), for
/// `Req: Clone`) and by every `Fn(&Req) -> Option<Req>`: the hook for requests that are not
/// `Clone`, or whose body must be rebuilt (reopen a file, re-encode a message). An
/// `http::Request<B>` is `Clone` when its body is; a streaming body can be buffered first with
/// [`BufferBodyLayer`](super::BufferBodyLayer).
///
/// ```
/// use retry_core::tower::CopyRequest;
///
/// // A request whose payload is rebuilt for each attempt, and that is never sent twice when it
/// // is marked as a one-shot.
/// struct Upload { path: String, once: bool }
///
/// let copy = |upload: &Upload| (!upload.once).then(|| Upload { path: upload.path.clone(), once: false });
/// assert!(copy.copy_request(&Upload { path: "a".into(), once: false }).is_some());
/// assert!(copy.copy_request(&Upload { path: "a".into(), once: true }).is_none());
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub trait CopyRequest<Req>: Send + Sync {
    /// A copy of `request` for one more attempt, or `None` if it cannot be sent again.
    fn copy_request(&self, request: &Req) -> Option<Req>;
}

/// Copies requests with `Clone` (what tower's own `Retry` policies do).
///
/// ```
/// use retry_core::tower::{CloneRequest, CopyRequest};
/// assert_eq!(CloneRequest.copy_request(&String::from("GET /")), Some("GET /".to_owned()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct CloneRequest;

impl<Req: Clone> CopyRequest<Req> for CloneRequest {
    #[inline]
    fn copy_request(&self, request: &Req) -> Option<Req> {
        Some(request.clone())
    }
}

impl<Req, F> CopyRequest<Req> for F
where
    F: Fn(&Req) -> Option<Req> + Send + Sync,
{
    fn copy_request(&self, request: &Req) -> Option<Req> {
        self(request)
    }
}
