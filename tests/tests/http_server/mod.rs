//! A scripted HTTP/1.1 server on loopback for the integration tests: each request gets the next
//! reply of the script (the last one repeats), and the server records when each request came
//! (on tokio's clock, so a test with a paused clock measures the client's waits in virtual time).

#![allow(dead_code)] // Each test file uses its own subset.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::time::Instant;

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this body.
    Ok(&'static str),
    /// This status with these headers and an empty body.
    Status(u16, Vec<(&'static str, String)>),
    /// This status with a `Retry-After` HTTP-date `secs` seconds from the server's wall clock.
    StatusRetryAt(u16, u64),
    /// Never answers.
    Hang,
}

/// A running server: its address and the arrival time of every request.
#[derive(Debug, Clone)]
pub struct Server {
    pub addr: SocketAddr,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Server {
    /// `http://127.0.0.1:port/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many requests arrived.
    pub fn hits(&self) -> usize {
        self.arrivals.lock().expect("arrivals lock").len()
    }

    /// The time between consecutive requests.
    pub fn gaps(&self) -> Vec<Duration> {
        let arrivals = self.arrivals.lock().expect("arrivals lock");
        arrivals.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// Starts a server on 127.0.0.1 (port chosen by the system) that answers `script` in order.
pub async fn serve(script: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local address");
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(script);
    let server = Server {
        addr,
        arrivals: Arc::clone(&arrivals),
    };
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let arrivals = Arc::clone(&arrivals);
            let script = Arc::clone(&script);
            let service = service_fn(move |_request: hyper::Request<hyper::body::Incoming>| {
                let reply = {
                    let mut arrivals = arrivals.lock().expect("arrivals lock");
                    arrivals.push(Instant::now());
                    script
                        .get(arrivals.len() - 1)
                        .or(script.last())
                        .cloned()
                        .unwrap_or(Reply::Ok(""))
                };
                respond(reply)
            });
            tokio::spawn(async move {
                // A client that gives up mid-request ends the connection: nothing to report.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    server
}

async fn respond(reply: Reply) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let mut response = hyper::Response::new(Full::new(Bytes::new()));
    match reply {
        Reply::Ok(body) => *response.body_mut() = Full::new(Bytes::from_static(body.as_bytes())),
        Reply::Status(status, headers) => {
            *response.status_mut() = hyper::StatusCode::from_u16(status).expect("valid status");
            for (name, value) in headers {
                let value = hyper::header::HeaderValue::from_str(&value).expect("valid value");
                response.headers_mut().append(name, value);
            }
        }
        Reply::StatusRetryAt(status, secs) => {
            *response.status_mut() = hyper::StatusCode::from_u16(status).expect("valid status");
            let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(secs));
            let value = hyper::header::HeaderValue::from_str(&date).expect("valid date");
            response.headers_mut().insert("retry-after", value);
        }
        Reply::Hang => std::future::pending::<()>().await,
    }
    Ok(response)
}

/// A loopback address where nothing listens: connecting is refused.
pub async fn refused_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    listener.local_addr().expect("local address")
}

/// `Reply::Status` with one header.
pub fn status(code: u16, header: Option<(&'static str, &str)>) -> Reply {
    Reply::Status(
        code,
        header
            .map(|(name, value)| vec![(name, value.to_owned())])
            .unwrap_or_default(),
    )
}
