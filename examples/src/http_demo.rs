//! A demo HTTP/1.1 server on loopback for the integration examples: each request to a path gets
//! the next reply of that path's script (the last one repeats).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One reply: a status, a `Retry-After` value (if any) and a body.
pub type Reply = (u16, Option<&'static str>, &'static str);

/// Starts the server on 127.0.0.1 (a port the system picks) with one script per path; a path
/// without a script is 404. Returns its address.
pub async fn serve(scripts: Vec<(&'static str, Vec<Reply>)>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let scripts: HashMap<&'static str, Vec<Reply>> = scripts.into_iter().collect();
    let state = Arc::new((scripts, Mutex::new(HashMap::<String, usize>::new())));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let state = Arc::clone(&state);
            let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let reply = next_reply(&state, request.uri().path());
                async move { Ok::<_, Infallible>(response(reply)) }
            });
            tokio::spawn(async move {
                // A client that goes away ends the connection: nothing to report.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}

type State = (
    HashMap<&'static str, Vec<Reply>>,
    Mutex<HashMap<String, usize>>,
);

fn next_reply(state: &State, path: &str) -> Reply {
    let (scripts, seen) = state;
    let Some(script) = scripts.get(path) else {
        return (404, None, "not found");
    };
    let mut seen = seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let count = seen.entry(path.to_owned()).or_default();
    *count += 1;
    script
        .get(*count - 1)
        .or(script.last())
        .copied()
        .unwrap_or((200, None, ""))
}

fn response((status, retry_after, body): Reply) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(retry_after) = retry_after {
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static(retry_after),
        );
    }
    response
}
