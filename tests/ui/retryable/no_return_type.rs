use retry_core::retryable;

#[retryable]
async fn ping() {
    println!("ping");
}

fn main() {
    let _ = ping();
}
