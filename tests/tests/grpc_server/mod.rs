//! A scripted gRPC server on loopback for the tonic tests: one unary method, `/kv.Kv/Get`,
//! written by hand as tonic's code generator would write it (no `protoc` needed). Each call gets
//! the next reply of the script (the last one repeats); arrival times are recorded on tokio's
//! clock.

#![allow(dead_code)] // Each test file uses its own subset.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tonic::{Code, Status};

/// The request message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetRequest {
    #[prost(string, tag = "1")]
    pub key: String,
}

/// The reply message.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetReply {
    #[prost(string, tag = "1")]
    pub value: String,
}

/// The method's path.
pub const GET_PATH: &str = "/kv.Kv/Get";

/// One scripted reply: a value, or a status with an optional `grpc-retry-pushback-ms`.
#[derive(Debug, Clone, Copy)]
pub enum Reply {
    Value(&'static str),
    Fail(Code, Option<&'static str>),
}

/// A running server.
#[derive(Clone)]
pub struct GrpcServer {
    pub addr: SocketAddr,
    state: Arc<State>,
}

struct State {
    script: Vec<Reply>,
    arrivals: Mutex<Vec<Instant>>,
}

impl GrpcServer {
    /// `http://127.0.0.1:port`.
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn hits(&self) -> usize {
        self.state.arrivals.lock().expect("lock").len()
    }

    pub fn gaps(&self) -> Vec<Duration> {
        let arrivals = self.state.arrivals.lock().expect("lock");
        arrivals.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

impl State {
    fn next(&self) -> Reply {
        let mut arrivals = self.arrivals.lock().expect("lock");
        arrivals.push(Instant::now());
        let n = arrivals.len() - 1;
        self.script
            .get(n)
            .or(self.script.last())
            .copied()
            .unwrap_or(Reply::Value(""))
    }

    async fn get(
        &self,
        _request: tonic::Request<GetRequest>,
    ) -> Result<tonic::Response<GetReply>, Status> {
        match self.next() {
            Reply::Value(value) => Ok(tonic::Response::new(GetReply {
                value: value.to_owned(),
            })),
            Reply::Fail(code, pushback) => {
                let mut status = Status::new(code, "scripted");
                if let Some(pushback) = pushback {
                    let value = pushback.parse().expect("ASCII metadata");
                    status
                        .metadata_mut()
                        .insert("grpc-retry-pushback-ms", value);
                }
                Err(status)
            }
        }
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
            let method = tower::service_fn(move |request| {
                let state = Arc::clone(&state);
                async move { state.get(request).await }
            });
            let mut grpc = tonic::server::Grpc::new(tonic_prost::ProstCodec::default());
            Ok(grpc.unary(method, request).await)
        })
    }
}

/// Starts a gRPC server (HTTP/2 without TLS) on 127.0.0.1 that answers `script` in order.
pub async fn serve(script: Vec<Reply>) -> GrpcServer {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    let state = Arc::new(State {
        script,
        arrivals: Mutex::new(Vec::new()),
    });
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
    GrpcServer { addr, state }
}

/// One call of `/kv.Kv/Get` on any gRPC transport: what a generated client method does.
pub async fn get<T>(transport: T, key: &str) -> Result<String, Status>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    T::ResponseBody: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut client = tonic::client::Grpc::new(transport);
    client
        .ready()
        .await
        .map_err(|error| Status::from_error(error.into()))?;
    let request = tonic::Request::new(GetRequest {
        key: key.to_owned(),
    });
    let path = http::uri::PathAndQuery::from_static(GET_PATH);
    let reply: tonic::Response<GetReply> = client
        .unary(request, path, tonic_prost::ProstCodec::default())
        .await?;
    Ok(reply.into_inner().value)
}
