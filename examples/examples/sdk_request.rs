//! The attempt inside the attempt: a `#[retryable]` reqwest call sends the AWS SDKs'
//! `amz-sdk-request` header (`attempt=1; max=3`, then `attempt=2; max=3`, ...), read from
//! `retry_core::attempt::current()`. A demo server on loopback answers 503 once, then the item,
//! and prints the headers it saw.
//!
//! Run it with `cargo run -p examples --example sdk_request`.

use examples::http_demo::{self, Reply, status};
use examples::sdk_request::fetch;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = http_demo::serve(vec![status(503, None), Reply::Ok("a teapot")]).await?;
    let item = fetch(&reqwest::Client::new(), &server.url("/items/7")).await?;
    println!("item: {item:?}");
    for (request, header) in server.attempt_headers().iter().enumerate() {
        println!("request {}: amz-sdk-request: {header:?}", request + 1);
    }
    Ok(())
}
