//! The demo HTTP/1.1 server on loopback, for the reqwest and tower examples and their
//! integration tests. Each request gets the next reply of its script (the last one repeats), and
//! the server records when each request arrived, on tokio's clock: under a paused clock the gaps
//! between requests are the client's waits in virtual time. [`serve`] answers every path from one
//! script; [`serve_paths`] gives each path its own script and answers other paths 404. It also
//! keeps the AWS SDKs' `amz-sdk-request` header of each request ([`HttpServer::attempt_headers`]).

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::arrivals::Arrivals;
use crate::script::Script;

/// The first second an HTTP-date cannot write (RFC 9110 section 5.6.7 has four-digit years):
/// 10000-01-01T00:00:00Z, in seconds since the Unix epoch.
const FIRST_UNWRITABLE_DATE: u64 = 253_402_300_800;

/// One scripted reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// 200 with this body.
    Ok(&'static str),
    /// This status with these headers and an empty body.
    Status(u16, Vec<(&'static str, String)>),
    /// This status with a `Retry-After` HTTP-date this many seconds after the server's wall
    /// clock at the time of the reply.
    StatusRetryAt(u16, u64),
    /// Never answers.
    Hang,
}

/// [`Reply::Status`] with at most one header.
pub fn status(code: u16, header: Option<(&'static str, &str)>) -> Reply {
    Reply::Status(
        code,
        header
            .map(|(name, value)| vec![(name, value.to_owned())])
            .unwrap_or_default(),
    )
}

/// A running server: its address and when each request arrived.
#[derive(Clone)]
pub struct HttpServer {
    addr: SocketAddr,
    state: Arc<State>,
}

impl HttpServer {
    /// `http://127.0.0.1:port` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many requests arrived (on any path).
    pub fn hits(&self) -> usize {
        self.state.arrivals.count()
    }

    /// The time between consecutive requests, on tokio's clock (virtual under a paused clock).
    pub fn gaps(&self) -> Vec<Duration> {
        self.state.arrivals.gaps()
    }

    /// The `amz-sdk-request` header of each request, in order of arrival (`None` for a request
    /// without one, or with one that is not text).
    pub fn attempt_headers(&self) -> Vec<Option<String>> {
        self.state.attempt_headers().clone()
    }
}

/// The AWS SDKs' header naming each attempt of a call (`attempt=2; max=3`).
const AMZ_SDK_REQUEST: &str = "amz-sdk-request";

/// Starts a server on 127.0.0.1, on a port the system picks, that answers every request from
/// `script` in order (the last reply repeats), whatever its path. A script that is empty or names
/// an invalid status, header or date is `InvalidInput`.
pub async fn serve(script: Vec<Reply>) -> io::Result<HttpServer> {
    start(vec![Route::new(None, script)?]).await
}

/// Starts a server on 127.0.0.1, on a port the system picks, with one script per path (each
/// answered in order, its last reply repeating); a request for any other path gets 404. A path
/// given twice, or a script as [`serve`] refuses it, is `InvalidInput`.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use examples::http_demo::{Reply, serve_paths, status};
///
/// let server = serve_paths(vec![(
///     "/items/7",
///     vec![status(503, Some(("retry-after", "1"))), Reply::Ok("a teapot")],
/// )])
/// .await?;
/// println!("GET {}", server.url("/items/7"));
/// # Ok(())
/// # }
/// ```
pub async fn serve_paths(scripts: Vec<(&'static str, Vec<Reply>)>) -> io::Result<HttpServer> {
    let mut routes: Vec<Route> = Vec::with_capacity(scripts.len());
    for (path, script) in scripts {
        if routes.iter().any(|route| route.path == Some(path)) {
            return Err(invalid(format!("the path {path:?} has two scripts")));
        }
        routes.push(Route::new(Some(path), script)?);
    }
    start(routes).await
}

/// Binds the listener and serves `routes` until the runtime shuts down.
async fn start(routes: Vec<Route>) -> io::Result<HttpServer> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let state = Arc::new(State {
        routes,
        arrivals: Arrivals::default(),
        attempt_headers: Mutex::default(),
    });
    let server = HttpServer {
        addr,
        state: Arc::clone(&state),
    };
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let state = Arc::clone(&state);
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                state.note_attempt(request.headers());
                respond(state.answer(request.uri().path()))
            });
            tokio::spawn(async move {
                // A client that gives up mid-request ends the connection: nothing to report.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(server)
}

/// The server's state: its routes, the arrival times and the requests' attempt headers.
struct State {
    routes: Vec<Route>,
    arrivals: Arrivals,
    attempt_headers: Mutex<Vec<Option<String>>>,
}

impl State {
    /// Keeps the request's `amz-sdk-request` header.
    fn note_attempt(&self, headers: &HeaderMap) {
        let value = headers
            .get(AMZ_SDK_REQUEST)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        self.attempt_headers().push(value);
    }

    /// The headers kept; a panic elsewhere while the lock was held leaves them whole.
    fn attempt_headers(&self) -> std::sync::MutexGuard<'_, Vec<Option<String>>> {
        self.attempt_headers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes the request's arrival; its answer is the next reply of its path's script.
    fn answer(&self, path: &str) -> Answer {
        self.arrivals.record();
        match self.routes.iter().find(|route| route.serves(path)) {
            Some(route) => route.script.next().clone(),
            None => Answer::Fixed(StatusCode::NOT_FOUND, HeaderMap::new(), "not found"),
        }
    }
}

/// A script and the path it answers (`None`: every path).
struct Route {
    path: Option<&'static str>,
    script: Script<Answer>,
}

impl Route {
    fn new(path: Option<&'static str>, script: Vec<Reply>) -> io::Result<Self> {
        let answers = script
            .into_iter()
            .map(Answer::new)
            .collect::<io::Result<_>>()?;
        Ok(Self {
            path,
            script: Script::new(answers)?,
        })
    }

    fn serves(&self, path: &str) -> bool {
        self.path.is_none_or(|own| own == path)
    }
}

/// A reply checked and in hyper's types.
#[derive(Debug, Clone)]
enum Answer {
    /// This status, these headers and this body.
    Fixed(StatusCode, HeaderMap, &'static str),
    /// This status with a `Retry-After` date this many seconds from the reply.
    RetryAt(StatusCode, u64),
    /// No answer.
    Hang,
}

impl Answer {
    fn new(reply: Reply) -> io::Result<Self> {
        Ok(match reply {
            Reply::Ok(body) => Answer::Fixed(StatusCode::OK, HeaderMap::new(), body),
            Reply::Status(code, headers) => {
                Answer::Fixed(status_code(code)?, header_map(headers)?, "")
            }
            Reply::StatusRetryAt(code, secs) => {
                retry_at(secs)?;
                Answer::RetryAt(status_code(code)?, secs)
            }
            Reply::Hang => Answer::Hang,
        })
    }
}

/// The response to `answer`. A `Retry-After` date past the year 9999 (checked by `serve`, so
/// only if the wall clock has got there since) is an error, which ends the connection.
async fn respond(answer: Answer) -> io::Result<Response<Full<Bytes>>> {
    let (status, headers, body) = match answer {
        Answer::Fixed(status, headers, body) => (status, headers, body),
        Answer::RetryAt(status, secs) => {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, retry_at(secs)?);
            (status, headers, "")
        }
        Answer::Hang => std::future::pending().await,
    };
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    Ok(response)
}

/// The HTTP-date `secs` seconds after now on the wall clock.
fn retry_at(secs: u64) -> io::Result<HeaderValue> {
    let too_late = || {
        invalid(format!(
            "a Retry-After {secs} s from now is past the year 9999"
        ))
    };
    let date = SystemTime::now()
        .checked_add(Duration::from_secs(secs))
        .ok_or_else(too_late)?;
    let since_epoch = date.duration_since(UNIX_EPOCH).map_err(io::Error::other)?;
    if since_epoch.as_secs() >= FIRST_UNWRITABLE_DATE {
        return Err(too_late());
    }
    HeaderValue::try_from(httpdate::fmt_http_date(date)).map_err(io::Error::other)
}

fn status_code(code: u16) -> io::Result<StatusCode> {
    StatusCode::from_u16(code).map_err(|_| invalid(format!("{code} is not an HTTP status")))
}

fn header_map(headers: Vec<(&'static str, String)>) -> io::Result<HeaderMap> {
    let mut map = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let name = HeaderName::try_from(name)
            .map_err(|_| invalid(format!("{name:?} is not a header name")))?;
        let value = HeaderValue::try_from(&value)
            .map_err(|_| invalid(format!("{value:?} is not a header value")))?;
        map.append(name, value);
    }
    Ok(map)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
