use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Store {
    calls: u32,
}

impl Store {
    // Two copies in flight cannot both borrow `self` mutably.
    #[retryable(hedge_after = "50ms")]
    async fn get(&mut self) -> Result<u32, StoreError> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn main() {
    let mut store = Store { calls: 0 };
    let _ = store.get();
}
