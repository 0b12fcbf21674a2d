//! A demo gRPC service for the tonic example, written by hand as tonic's code generator would
//! write it from this `.proto` (so the example needs no `protoc`):
//!
//! ```text
//! service Kv { rpc Get(GetRequest) returns (GetReply); }
//! message GetRequest { string key = 1; }
//! message GetReply { string value = 1; }
//! ```
//!
//! [`serve`] starts a server on loopback whose answers follow a script; [`KvClient`] is the
//! generated client's shape.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tonic::{Code, Status};

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

    /// `rpc Get`.
    pub async fn get(&mut self, request: GetRequest) -> Result<tonic::Response<GetReply>, Status> {
        self.inner
            .ready()
            .await
            .map_err(|error| Status::unknown(format!("service not ready: {}", error.into())))?;
        let path = http::uri::PathAndQuery::from_static(GET_PATH);
        self.inner
            .unary(
                tonic::Request::new(request),
                path,
                tonic_prost::ProstCodec::default(),
            )
            .await
    }
}

/// One scripted answer: a value, or a status code with an optional `grpc-retry-pushback-ms`.
pub type Answer = Result<&'static str, (Code, Option<&'static str>)>;

/// The server's state: its script and how many calls it answered.
struct Script {
    answers: Vec<Answer>,
    calls: Mutex<usize>,
}

impl Script {
    fn next(&self) -> Answer {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *calls += 1;
        self.answers
            .get(*calls - 1)
            .or(self.answers.last())
            .copied()
            .unwrap_or(Ok(""))
    }

    async fn get(
        &self,
        request: tonic::Request<GetRequest>,
    ) -> Result<tonic::Response<GetReply>, Status> {
        match self.next() {
            Ok(value) => Ok(tonic::Response::new(GetReply {
                value: format!("{}={value}", request.into_inner().key),
            })),
            Err((code, pushback)) => {
                let mut status = Status::new(code, "scripted failure");
                if let Some(pushback) = pushback.and_then(|ms| ms.parse().ok()) {
                    status
                        .metadata_mut()
                        .insert("grpc-retry-pushback-ms", pushback);
                }
                Err(status)
            }
        }
    }
}

/// The server's tower service: what tonic's generated `KvServer` does for one unary method.
#[derive(Clone)]
struct KvServer(Arc<Script>);

impl tower::Service<http::Request<Incoming>> for KvServer {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Incoming>) -> Self::Future {
        let script = Arc::clone(&self.0);
        Box::pin(async move {
            if request.uri().path() != GET_PATH {
                return Ok(Status::unimplemented("no such method").into_http());
            }
            let method = tower::service_fn(move |request| {
                let script = Arc::clone(&script);
                async move { script.get(request).await }
            });
            let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
            Ok(grpc.unary(method, request).await)
        })
    }
}

/// Starts a `Kv` server (HTTP/2 without TLS) on 127.0.0.1 that answers `answers` in order (the
/// last one repeats). Returns its address.
pub async fn serve(answers: Vec<Answer>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = KvServer(Arc::new(Script {
        answers,
        calls: Mutex::new(0),
    }));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = TowerToHyperService::new(server.clone());
            tokio::spawn(async move {
                // A client that goes away ends the connection: nothing to report.
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}
