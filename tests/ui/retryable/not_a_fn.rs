use retry_core::retryable;

#[retryable(max_attempts = 3)]
struct Client {
    endpoint: String,
}

fn main() {
    let client = Client {
        endpoint: String::new(),
    };
    let _ = client.endpoint;
}
