//! Hedging in the simulator: hedged latency matches an estimate made outside it, and the
//! baselines do what tower's and gRPC's code and proposal say, in the faults where they differ.

use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
use retry_sim::latency::TailLatency;
use retry_sim::metrics::RunMetrics;
use retry_sim::rng::Rng;
use retry_sim::server::ServiceTime;
use retry_sim::sim::{SimConfig, run};
use retry_sim::strategy::StrategySpec;
use retry_sim::time::{MILLI, Nanos, SECOND};

/// The paper's shape, nothing queued: 50 clients × 10 req/s for `seconds`.
fn tail(seconds: u64) -> SimConfig {
    let mut config = SimConfig::new();
    config.layers[0].instances = 50;
    config.layers[0].attempt_timeout = 30 * SECOND;
    config.layers[0].deadline = 30 * SECOND;
    config.rate = 10.0;
    config.horizon = seconds * SECOND;
    config.server.workers = 400;
    config.server.service = ServiceTime::Tail(TailLatency::paper());
    config
}

/// S1's or S3's fault at 30 s for 40 s, 20 clients × 7 req/s, 80 s.
fn fault(kind: FaultKind) -> SimConfig {
    let mut config = SimConfig::new();
    config.layers[0].instances = 20;
    config.horizon = 80 * SECOND;
    config.faults = FaultSchedule::new(vec![Fault::at(kind, 30.0, 40.0)]);
    config
}

fn throttle() -> FaultKind {
    FaultKind::Throttle {
        rate: 100.0,
        burst: 10.0,
        retry_after: SECOND,
    }
}

fn metrics(config: &SimConfig, strategy: &str, seed: u64) -> RunMetrics {
    let spec = StrategySpec::named(strategy).expect("a built-in strategy");
    run(config, &spec, seed).expect("a valid run").metrics
}

/// gRPC's policy on the paper's shape, estimated directly from the shape: copies at 0, 10 ms
/// and 20 ms while no answer came; returns (extra requests, p99 in ms).
fn estimate_grpc_10ms(draws: usize) -> (f64, f64) {
    let shape = TailLatency::paper();
    let mut rng = Rng::new(99);
    let delay = 10 * MILLI;
    let mut copies = 0u64;
    let mut latencies: Vec<Nanos> = (0..draws)
        .map(|_| {
            let mut answer = shape.sample(&mut rng);
            for k in 1..3 {
                let sent = k * delay;
                if answer <= sent {
                    break;
                }
                copies += 1;
                answer = answer.min(sent + shape.sample(&mut rng));
            }
            answer
        })
        .collect();
    latencies.sort_unstable();
    let p99 = latencies[(draws as f64 * 0.99).ceil() as usize - 1];
    (copies as f64 / draws as f64, p99 as f64 / MILLI as f64)
}

#[test]
fn hedged_latency_matches_the_estimate_from_the_shape() {
    let config = tail(60);
    let (mut extra, mut p99, mut p999_none, mut p999) = (0.0, 0.0, 0.0, 0.0);
    for seed in 1..=3 {
        let hedged = metrics(&config, "grpc-hedging-10ms", seed);
        let none = metrics(&config, "none", seed);
        extra += (hedged.amplification - 1.0) / 3.0;
        p99 += hedged.p99_ms / 3.0;
        p999 += hedged.p999_ms / 3.0;
        p999_none += none.p999_ms / 3.0;
    }
    let (expected_extra, expected_p99) = estimate_grpc_10ms(1_000_000);
    assert!(
        (extra / expected_extra - 1.0).abs() < 0.1,
        "extra requests {extra} vs {expected_extra}"
    );
    assert!(
        (p99 / expected_p99 - 1.0).abs() < 0.05,
        "p99 {p99} ms vs {expected_p99} ms"
    );
    assert!(p999_none / p999 > 10.0, "{p999_none} ms → {p999} ms");
}

#[test]
fn tower_hedges_until_its_histogram_holds_no_success() {
    let config = fault(FaultKind::Blackhole);
    let m = metrics(&config, "tower-hedge-p95", 1);
    // Every call is hedged from 30 s, the last healthy period's p95 after it starts; at 40 s
    // the histograms rotate and the one read holds no success: no more hedges (but those of
    // the calls of the last 150 ms before).
    assert!((1.2..1.3).contains(&m.amplification), "{}", m.amplification);
    assert!(
        m.amplification_late < 1.01,
        "from +10 s: {}",
        m.amplification_late
    );
}

#[test]
fn under_tower_the_first_answer_wins_even_a_429() {
    let config = fault(throttle());
    let (none, tower) = (
        metrics(&config, "none", 1),
        metrics(&config, "tower-hedge-p95", 1),
    );
    // A hedge meets the throttle and its 429 comes back before the original's answer.
    assert!(tower.hedges > 0.02, "{}", tower.hedges);
    assert!(
        tower.success_rate < none.success_rate - 0.02,
        "{} vs {}",
        tower.success_rate,
        none.success_rate
    );
}

#[test]
fn grpc_throttling_stops_hedges_that_get_answers_not_hedges_that_get_none() {
    // Fast failures: each takes a token, and each client's count falls to the threshold
    // after its first five (20 clients × about 5 hedges over 5,600 requests).
    let outage = metrics(&fault(FaultKind::Outage), "grpc-hedging-150ms", 1);
    assert!(outage.amplification < 1.02, "{}", outage.amplification);
    assert!(outage.hedges_refused > 0.9, "{}", outage.hedges_refused);
    // A blackhole answers nothing: no token is taken, every call sends its 3 copies.
    let blackhole = metrics(&fault(FaultKind::Blackhole), "grpc-hedging-150ms", 1);
    assert!(
        blackhole.amplification > 2.95,
        "{}",
        blackhole.amplification
    );
}

#[test]
fn a_hedged_run_is_a_function_of_its_seed() {
    let config = fault(throttle());
    for name in ["tower-hedge-p95", "grpc-hedging-150ms", "hedge-150ms"] {
        let spec = StrategySpec::named(name).unwrap();
        let a = run(&config, &spec, 3).unwrap();
        let b = run(&config, &spec, 3).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
    }
}

#[test]
fn hedging_runs_with_one_layer_of_clients() {
    let mut config = fault(FaultKind::Outage);
    config.layers.push(config.layers[0].clone());
    let spec = StrategySpec::named("tower-hedge-p95").unwrap();
    let error = run(&config, &spec, 1).unwrap_err();
    assert!(error.contains("one layer"), "{error}");
}

/// The extra requests of `arm` over `reference` in `config`, in percent, worst of `seeds`.
fn worst_extra(config: &SimConfig, arm: &str, reference: &str, seeds: u64) -> f64 {
    (1..=seeds)
        .map(|seed| {
            let (arm, reference) = (metrics(config, arm, seed), metrics(config, reference, seed));
            (arm.amplification / reference.amplification - 1.0) * 100.0
        })
        .fold(f64::MIN, f64::max)
}

/// In a blackhole every call is due a hedge, and the quota pays for the first ones: hedges
/// spend the top half of what retries would have spent, so the outage sees no more requests
/// than without hedging (within 1 %).
#[test]
fn ours_hedges_take_the_retries_quota_in_an_outage() {
    let config = fault(FaultKind::Blackhole);
    let hedged = metrics(&config, "hedge-150ms", 1);
    assert!(hedged.hedges > 0.01, "hedges sent: {}", hedged.hedges);
    let extra = worst_extra(&config, "hedge-150ms", "default", 2);
    assert!(extra <= 1.0, "extra requests {extra} %");
}

/// Under throttling a 429 pauses the client's hedges: hedges add under 0.5 % requests, and
/// the run makes as many requests as without hedging (the mean over seeds within 1 %: a
/// single seed's run diverges from its unhedged twin by up to about 1 % either way, with or
/// without a hedge sent, as any change to the event sequence makes it).
#[test]
fn ours_hedges_stop_under_throttling() {
    let config = fault(throttle());
    let mut extra = 0.0;
    for seed in 1..=4 {
        let (hedged, reference) = (
            metrics(&config, "hedge-150ms", seed),
            metrics(&config, "default", seed),
        );
        assert!(
            hedged.hedges < 0.005,
            "seed {seed}: {} hedges/request",
            hedged.hedges
        );
        extra += (hedged.amplification / reference.amplification - 1.0) * 100.0 / 4.0;
    }
    assert!(extra.abs() <= 1.0, "extra requests {extra} %");
}

/// On the paper's shape, hedging at the measured p95 cuts p99.9 more than tenfold for at
/// most 5 % more requests, once the clients have their samples (200 each: 20 s at 10/s).
#[test]
fn ours_p95_cuts_the_tail() {
    let mut config = tail(60);
    config.warmup = Some(30 * SECOND);
    let (none, hedged) = (
        metrics(&config, "default", 1),
        metrics(&config, "hedge-p95", 1),
    );
    assert!(
        none.p999_ms / hedged.p999_ms >= 10.0,
        "{} ms → {} ms",
        none.p999_ms,
        hedged.p999_ms
    );
    let extra = (hedged.amplification - 1.0) * 100.0;
    assert!((1.0..=5.0).contains(&extra), "extra requests {extra} %");
}

/// `retry-core`'s hedging runs over a standard strategy with a scope per client; the name's
/// delay is checked.
#[test]
fn ours_hedging_names_are_checked() {
    for (name, expected) in [
        ("adaptive+hedge-p95", "standard mode"),
        ("grpc+hedge-p95", "standard mode"),
        ("aws-2026-shared+hedge-p95", "scope per client"),
        ("hedge-p100", "strictly between 0 and 100"),
        ("hedge-0ms", "longer than zero"),
        ("hedge-10msx9", "max_hedges must be between 1 and 4"),
    ] {
        let error = StrategySpec::named(name).unwrap_err();
        assert!(error.contains(expected), "{name}: {error}");
    }
    assert!(StrategySpec::named("aws-2026+hedge-p99x2").is_ok());
}

/// The arm's calls run the runtime's `HedgedLoop`: hedges and the first attempt share
/// `max_attempts`. On the paper's shape (body median 3 ms) with up to 4 hedges 1 ms apart,
/// `max_attempts = 2` leaves one hedge per call (0.98 a request; the second hedge due, 0.78 a
/// request, is refused), while 5 lets a call send all four (2.23 a request).
#[test]
fn ours_hedges_share_max_attempts_with_the_first_attempt() {
    let mut config = tail(20);
    config.max_attempts = 2;
    let one_each = metrics(&config, "hedge-1msx4", 1);
    config.max_attempts = 5;
    let four_each = metrics(&config, "hedge-1msx4", 1);
    assert!(
        (0.9..=1.0).contains(&one_each.hedges) && one_each.hedges_refused > 0.5,
        "max_attempts 2: {} hedges/request, {} refused",
        one_each.hedges,
        one_each.hedges_refused
    );
    assert!(
        four_each.hedges >= 2.0,
        "max_attempts 5: {} hedges/request",
        four_each.hedges
    );
}
