use std::sync::Arc;
use retry_core::{RetryConfig, RetryStrategy, Scope, StandardStrategy};
use retry_sim::clock::SimClock;
use retry_sim::rng::Rng;
use retry_sim::time::SECOND;

#[test]
fn probe() {
    for rate in [70.0, 7.0, 0.7] {
        let clock = Arc::new(SimClock::new());
        let config = RetryConfig::recommended().build().unwrap();
        let scope = Scope::with_clock("p", &config, clock.clone());
        let s = StandardStrategy::builder(config).clock(clock.clone()).scope(scope.clone()).build();
        let mut rng = Rng::new(1);
        let mut t = 0u64;
        let (mut sum_level, mut sum_cap, mut n) = (0.0, 0.0, 0.0);
        let mut next_sample = 60 * SECOND;
        while t < 120 * SECOND {
            t += rng.exp(1e9 / rate);
            clock.set(t);
            let tok = s.acquire_initial_token();
            s.record_success(tok);
            while t >= next_sample && next_sample < 120 * SECOND {
                sum_level += f64::from(scope.quota().level());
                sum_cap += f64::from(scope.quota().capacity());
                n += 1.0;
                next_sample += SECOND / 10;
            }
        }
        let ideal = rate * 60.0;
        let level = sum_level / n;
        println!("rate {rate}: ideal {ideal:.0}, mean capacity {:.0}, mean level {level:.0} => S4 ampl ~ {:.3}", sum_cap / n, 1.0 + (level / 14.0).floor() * (700.0 / rate) / 42000.0);
    }
}
