//! The demo gRPC service `Kv`, written by hand as tonic's code generator would write it from
//! this `.proto` (so neither the examples nor the tests need `protoc`):
//!
//! ```text
//! service Kv { rpc Get(GetRequest) returns (GetReply); }
//! message GetRequest { string key = 1; }
//! message GetReply { string value = 1; }
//! ```
//!
//! [`serve`] starts a server on loopback whose answers follow a script and which records when
//! each call arrived; [`KvClient`] is the generated client's shape. The tonic example and the
//! tonic integration tests run against it.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tonic::metadata::MetadataValue;
use tonic::{Code, Status};

use crate::arrivals::Arrivals;
use crate::script::Script;

/// The request message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetRequest {
    /// The key to read.
    #[prost(string, tag = "1")]
    pub key: String,
}

/// The reply message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetReply {
    /// The key's value.
    #[prost(string, tag = "1")]
    pub value: String,
}

/// The method's path.
const GET_PATH: &str = "/kv.Kv/Get";

/// The metadata key of the server's retry pushback (gRFC A6).
const PUSHBACK_KEY: &str = "grpc-retry-pushback-ms";

/// A client of `Kv` over any gRPC transport (a `Channel`, or a `Channel` under layers).
#[derive(Debug, Clone)]
pub struct KvClient<T> {
    inner: tonic::client::Grpc<T>,
}

impl<T> KvClient<T>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    /// A client over `transport`.
    pub fn new(transport: T) -> Self {
        Self {
            inner: tonic::client::Grpc::new(transport),
        }
    }

    /// `rpc Get`, with a `GetRequest` or a `tonic::Request` of one (to give the call a deadline
    /// with `set_timeout`), as generated clients take it. A transport that fails before the call
    /// fails it with the status that error carries (`Status::from_error`), `UNKNOWN` if none.
    pub async fn get(
        &mut self,
        request: impl tonic::IntoRequest<GetRequest>,
    ) -> Result<tonic::Response<GetReply>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|error| Status::from_error(error.into()))?;
        let path = http::uri::PathAndQuery::from_static(GET_PATH);
        self.inner
            .unary(
                request.into_request(),
                path,
                tonic_prost::ProstCodec::default(),
            )
            .await
    }
}

/// One scripted reply of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A `GetReply` with this value.
    Value(&'static str),
    /// The status `Code` with the message "scripted" and, if given, this
    /// `grpc-retry-pushback-ms`, sent as written (a negative or malformed pushback included).
    Fail(Code, Option<&'static str>),
    /// Never answers.
    Hang,
}

impl Reply {
    /// What the method returns for this reply (`None`: it never returns); a pushback that is no
    /// ASCII metadata value is `InvalidInput`.
    fn answer(self) -> io::Result<Option<Result<GetReply, Status>>> {
        match self {
            Reply::Value(value) => Ok(Some(Ok(GetReply {
                value: value.to_owned(),
            }))),
            Reply::Hang => Ok(None),
            Reply::Fail(code, pushback) => {
                let mut status = Status::new(code, "scripted");
                if let Some(pushback) = pushback {
                    let value = MetadataValue::try_from(pushback).map_err(|_| {
                        io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("pushback {pushback:?} is not an ASCII metadata value"),
                        )
                    })?;
                    status.metadata_mut().insert(PUSHBACK_KEY, value);
                }
                Ok(Some(Err(status)))
            }
        }
    }
}

/// A running `Kv` server: its address and when each call arrived.
#[derive(Clone)]
pub struct GrpcServer {
    addr: SocketAddr,
    state: Arc<State>,
}

impl GrpcServer {
    /// `http://127.0.0.1:port`, for `Channel::from_shared`.
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many calls arrived.
    pub fn hits(&self) -> usize {
        self.state.arrivals.count()
    }

    /// The time between consecutive calls, on tokio's clock (virtual under a paused clock).
    pub fn gaps(&self) -> Vec<Duration> {
        self.state.arrivals.gaps()
    }
}

/// The server's state: its script and the arrival times.
struct State {
    script: Script<Option<Result<GetReply, Status>>>,
    arrivals: Arrivals,
}

impl State {
    /// `rpc Get`: notes the arrival and answers the script's next reply (`None`: never).
    fn get(&self) -> Option<Result<tonic::Response<GetReply>, Status>> {
        self.arrivals.record();
        self.script
            .next()
            .clone()
            .map(|answer| answer.map(tonic::Response::new))
    }
}

/// The server's tower service: what tonic's generated `KvServer` does for one unary method.
#[derive(Clone)]
struct KvService(Arc<State>);

impl tower::Service<http::Request<Incoming>> for KvService {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Incoming>) -> Self::Future {
        let state = Arc::clone(&self.0);
        Box::pin(async move {
            if request.uri().path() != GET_PATH {
                return Ok(Status::unimplemented("no such method").into_http());
            }
            let method = tower::service_fn(move |_: tonic::Request<GetRequest>| {
                let answer = state.get();
                async move {
                    match answer {
                        Some(answer) => answer,
                        None => std::future::pending().await,
                    }
                }
            });
            let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
            Ok(grpc.unary(method, request).await)
        })
    }
}

/// Starts a `Kv` server (HTTP/2 without TLS) on 127.0.0.1, on a port the system picks, that
/// answers `script` in order (the last reply repeats). An empty script or a pushback that is no
/// ASCII metadata value is `InvalidInput`.
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// use examples::grpc_demo::{Reply, serve};
///
/// let server = serve(vec![
///     Reply::Fail(tonic::Code::Unavailable, Some("100")),
///     Reply::Value("42"),
/// ])
/// .await?;
/// println!("Kv listens on {}", server.uri());
/// # Ok(())
/// # }
/// ```
pub async fn serve(script: Vec<Reply>) -> io::Result<GrpcServer> {
    let answers = script
        .into_iter()
        .map(Reply::answer)
        .collect::<io::Result<_>>()?;
    let state = Arc::new(State {
        script: Script::new(answers)?,
        arrivals: Arrivals::default(),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let service = KvService(Arc::clone(&state));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                // A client that goes away ends the connection: nothing to report.
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(GrpcServer { addr, state })
}
