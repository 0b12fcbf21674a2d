//! The demo servers themselves: routing by path, scripts whose last reply repeats, and the
//! scripts they refuse (with `InvalidInput`, never a panic or a reply other than the one written).

use std::io;

use examples::grpc_demo::{self, GetRequest, KvClient};
use examples::http_demo::{Reply, serve, serve_paths, status};
use tonic::Code;
use tonic::transport::Channel;

/// The status and body of `GET url`.
async fn get(url: &str) -> (u16, String) {
    let response = reqwest::get(url).await.expect("response");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

#[tokio::test]
async fn each_path_has_its_own_script_and_other_paths_are_404() {
    let server = serve_paths(vec![
        ("/a", vec![status(503, None), Reply::Ok("a")]),
        ("/b", vec![Reply::Ok("b")]),
    ])
    .await
    .expect("serve");
    let mut answers = Vec::new();
    for path in ["/a", "/b", "/a", "/a", "/c"] {
        answers.push(get(&server.url(path)).await);
    }
    let expected = [
        (503, ""),
        (200, "b"),
        (200, "a"),
        (200, "a"),
        (404, "not found"),
    ];
    let expected: Vec<(u16, String)> = expected
        .into_iter()
        .map(|(code, body)| (code, body.to_owned()))
        .collect();
    assert_eq!(answers, expected);
    assert_eq!(server.hits(), 5);
}

#[tokio::test]
async fn one_script_answers_every_path_in_order() {
    let server = serve(vec![
        status(429, Some(("retry-after", "3"))),
        Reply::Ok("x"),
    ])
    .await
    .expect("serve");
    let response = reqwest::get(server.url("/p")).await.expect("response");
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    assert_eq!(get(&server.url("/q")).await, (200, "x".to_owned()));
    assert_eq!(server.hits(), 2);
}

/// The error kind of a refused script, panicking if it was accepted.
fn refusal<T>(outcome: io::Result<T>) -> io::ErrorKind {
    match outcome {
        Ok(_) => panic!("the script was accepted"),
        Err(error) => error.kind(),
    }
}

#[tokio::test]
async fn the_http_server_refuses_scripts_it_could_not_follow() {
    let refused: Vec<(&str, Vec<Reply>)> = vec![
        ("no reply", vec![]),
        ("status 1000", vec![status(1000, None)]),
        ("status 99", vec![status(99, None)]),
        ("header name", vec![status(503, Some(("retry after", "1")))]),
        (
            "header value",
            vec![status(503, Some(("retry-after", "1\n")))],
        ),
        ("date overflow", vec![Reply::StatusRetryAt(503, u64::MAX)]),
        (
            "date past 9999",
            vec![Reply::StatusRetryAt(503, 253_402_300_800)],
        ),
    ];
    for (what, script) in refused {
        let kind = refusal(serve(script.clone()).await);
        assert_eq!(kind, io::ErrorKind::InvalidInput, "{what}");
        let kind = refusal(serve_paths(vec![("/", script)]).await);
        assert_eq!(kind, io::ErrorKind::InvalidInput, "{what} on a path");
    }
    let twice = serve_paths(vec![
        ("/a", vec![Reply::Ok("1")]),
        ("/a", vec![Reply::Ok("2")]),
    ]);
    assert_eq!(refusal(twice.await), io::ErrorKind::InvalidInput);
}

#[tokio::test]
async fn the_grpc_server_repeats_its_last_reply() {
    let server = grpc_demo::serve(vec![
        grpc_demo::Reply::Fail(Code::Unavailable, Some("250")),
        grpc_demo::Reply::Value("v"),
    ])
    .await
    .expect("serve");
    let channel = Channel::from_shared(server.uri())
        .expect("uri")
        .connect_lazy();
    let mut client = KvClient::new(channel);
    let request = || GetRequest { key: "k".into() };
    let status = client.get(request()).await.expect_err("scripted failure");
    assert_eq!(
        (status.code(), status.message()),
        (Code::Unavailable, "scripted")
    );
    assert_eq!(
        status
            .metadata()
            .get("grpc-retry-pushback-ms")
            .map(|v| v.as_bytes()),
        Some(&b"250"[..])
    );
    for _ in 0..2 {
        let reply = client.get(request()).await.expect("the value");
        assert_eq!(reply.into_inner().value, "v");
    }
    assert_eq!(server.hits(), 3);
}

#[tokio::test]
async fn the_grpc_server_refuses_scripts_it_could_not_follow() {
    assert_eq!(
        refusal(grpc_demo::serve(vec![]).await),
        io::ErrorKind::InvalidInput
    );
    let pushback = grpc_demo::Reply::Fail(Code::Unavailable, Some("1\n"));
    assert_eq!(
        refusal(grpc_demo::serve(vec![pushback]).await),
        io::ErrorKind::InvalidInput
    );
}
