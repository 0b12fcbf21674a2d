//! What a request tells [`RetryLayer`](super::RetryLayer): whether it is idempotent, and where
//! its attempt goes.

use std::rc::Rc;
use std::sync::Arc;

use http::header::CONTENT_TYPE;

use crate::attempt::Attempt;
use crate::classify::Idempotency;

/// A request under [`RetryLayer`](super::RetryLayer): it says whether it is idempotent (which
/// decides the errors that may have reached the server, [`Idempotency`]) and it may carry its
/// [`Attempt`] to the service. Both methods have defaults (undeclared; not carried), so a request
/// type of one's own opts in with an empty `impl`.
///
/// * `http::Request<B>`: idempotent as its method is (RFC 9110 §9.2.2,
///   [`Idempotency::of_method`]: a POST that timed out is not sent again, a PUT is), except a gRPC
///   call (`content-type: application/grpc...`), which is always a POST whatever the method's
///   semantics: undeclared. With feature `attempt-context`, each attempt's request carries its
///   [`Attempt`] in its extensions, for a service that reads it there (one that moves the
///   request to another task, as tower's `Buffer` does, cannot read `attempt::current()`);
///   inserting it costs the request's extension map an allocation, if it had none.
/// * `reqwest::Request` (feature `reqwest`, `reqwest::Client` as a tower service): idempotent as
///   its method is; its extensions are reqwest's own.
/// * the standard library's types (numbers, strings, `()`, `Vec<T>`, `Option<T>`, tuples, and
///   references and smart pointers to anything) and `bytes::Bytes`: undeclared.
///
/// [`RetryLayer::idempotent`](super::RetryLayer::idempotent) overrides what requests say.
///
/// ```
/// use retry_core::attempt::Attempt;
/// use retry_core::classify::Idempotency;
/// use retry_core::tower::RequestInfo;
///
/// /// A request of one's own: a payment is never sent twice, a lookup always may be.
/// #[derive(Clone)]
/// enum Command {
///     Charge { cents: u64 },
///     Lookup { id: u64 },
/// }
///
/// impl RequestInfo for Command {
///     fn idempotency(&self) -> Idempotency {
///         match self {
///             Command::Charge { .. } => Idempotency::NotIdempotent,
///             Command::Lookup { .. } => Idempotency::Idempotent,
///         }
///     }
/// }
///
/// assert_eq!(Command::Charge { cents: 100 }.idempotency(), Idempotency::NotIdempotent);
/// let get = http::Request::get("/items/7").body(()).unwrap();
/// assert_eq!(get.idempotency(), Idempotency::Idempotent);
/// # let _ = Command::Lookup { id: 7 };
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say whether it is idempotent: `RetryLayer` needs `{Self}: retry_core::tower::RequestInfo`",
    label = "`RequestInfo` is not implemented for `{Self}`",
    note = "implement it for your request type: an empty `impl retry_core::tower::RequestInfo for {Self} {{}}` leaves its idempotency undeclared (errors that may have reached the server are retried only when the server is at fault)",
    note = "or override `idempotency` to say which requests may be sent twice, or declare it for the whole layer with `RetryLayer::idempotent(...)`"
)]
pub trait RequestInfo {
    /// Whether sending this request twice is as good as sending it once. Default:
    /// [`Idempotency::Undeclared`].
    fn idempotency(&self) -> Idempotency {
        Idempotency::Undeclared
    }

    /// Carries `attempt` (this request is that attempt's) to the service, if the request has
    /// room for it; `RetryLayer` calls it with feature `attempt-context`. Default: nothing.
    fn set_attempt(&mut self, attempt: Attempt) {
        let _ = attempt;
    }
}

/// Marks `request` as `attempt`'s ([`RequestInfo::set_attempt`]) with feature
/// `attempt-context`; without it, nothing (the success path pays nothing for it).
#[inline(always)]
pub(super) fn mark_attempt<Req: RequestInfo>(request: &mut Req, attempt: Attempt) {
    #[cfg(feature = "attempt-context")]
    request.set_attempt(attempt);
    #[cfg(not(feature = "attempt-context"))]
    let _ = (request, attempt);
}

/// The prefix of gRPC's content types (`application/grpc`, `application/grpc+proto`, ...).
const GRPC_CONTENT_TYPE: &[u8] = b"application/grpc";

impl<B> RequestInfo for http::Request<B> {
    /// As its method is (RFC 9110 §9.2.2), undeclared for gRPC.
    fn idempotency(&self) -> Idempotency {
        let grpc = self
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|value| value.as_bytes().starts_with(GRPC_CONTENT_TYPE));
        if grpc {
            return Idempotency::Undeclared;
        }
        Idempotency::of_method(self.method())
    }

    /// In the request's extensions.
    fn set_attempt(&mut self, attempt: Attempt) {
        self.extensions_mut().insert(attempt);
    }
}

#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
impl RequestInfo for reqwest::Request {
    /// As its method is (RFC 9110 §9.2.2).
    fn idempotency(&self) -> Idempotency {
        Idempotency::of_method(self.method())
    }
}

/// Undeclared, not carried: requests that say nothing of themselves.
macro_rules! undeclared {
    ($($ty:ty),* $(,)?) => {$(
        impl RequestInfo for $ty {}
    )*};
}

undeclared!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    String,
    bytes::Bytes,
);

impl<T: ?Sized> RequestInfo for &T {}
impl<T> RequestInfo for Vec<T> {}
impl<T> RequestInfo for Option<T> {}
impl<A> RequestInfo for (A,) {}
impl<A, B> RequestInfo for (A, B) {}
impl<A, B, C> RequestInfo for (A, B, C) {}
impl<A, B, C, D> RequestInfo for (A, B, C, D) {}

impl<T: RequestInfo + ?Sized> RequestInfo for Box<T> {
    /// What the boxed request says.
    fn idempotency(&self) -> Idempotency {
        (**self).idempotency()
    }

    /// Carried by the boxed request.
    fn set_attempt(&mut self, attempt: Attempt) {
        (**self).set_attempt(attempt)
    }
}

impl<T: RequestInfo + ?Sized> RequestInfo for Arc<T> {
    /// What the shared request says (it cannot carry the attempt: it is shared).
    fn idempotency(&self) -> Idempotency {
        (**self).idempotency()
    }
}

impl<T: RequestInfo + ?Sized> RequestInfo for Rc<T> {
    /// What the shared request says (it cannot carry the attempt: it is shared).
    fn idempotency(&self) -> Idempotency {
        (**self).idempotency()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_request_is_as_idempotent_as_its_method_but_grpc_is_undeclared() {
        let request = |method: &str| {
            http::Request::builder()
                .method(method)
                .body(())
                .expect("a request")
        };
        assert_eq!(request("PUT").idempotency(), Idempotency::Idempotent);
        assert_eq!(request("POST").idempotency(), Idempotency::NotIdempotent);
        let mut grpc = request("POST");
        grpc.headers_mut().insert(
            CONTENT_TYPE,
            http::HeaderValue::from_static("application/grpc+proto"),
        );
        assert_eq!(grpc.idempotency(), Idempotency::Undeclared);
        assert_eq!(7_u64.idempotency(), Idempotency::Undeclared);
        assert_eq!(
            Box::new(request("GET")).idempotency(),
            Idempotency::Idempotent
        );
    }

    #[test]
    fn an_http_request_carries_its_attempt_in_its_extensions() {
        let mut request = http::Request::new(());
        let attempt = Attempt::new(2, Some(3));
        request.set_attempt(attempt);
        assert_eq!(request.extensions().get::<Attempt>(), Some(&attempt));
    }
}
