//! Light versions of the goal scenarios, fast enough for debug builds.

use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
use retry_sim::sim::{LayerConfig, SimConfig, run};
use retry_sim::strategy::StrategySpec;
use retry_sim::time::SECOND;

fn outage(kind: FaultKind) -> SimConfig {
    let mut config = SimConfig::new();
    config.horizon = 200 * SECOND;
    config.faults = FaultSchedule::new(vec![Fault::at(kind, 120.0, 60.0)]);
    config
}

fn metrics(config: &SimConfig, strategy: &str) -> retry_sim::metrics::RunMetrics {
    run(
        config,
        &StrategySpec::named(strategy).expect("a built-in strategy"),
        1,
    )
    .expect("a valid run")
    .metrics
}

#[test]
fn the_default_and_aws_2026_keep_an_outage_below_1_11_attempts_per_request() {
    for (kind, strategy) in [
        (FaultKind::Outage, "aws-2026"),
        (FaultKind::Blackhole, "aws-2026"),
        (FaultKind::Outage, "default"),
        (FaultKind::Blackhole, "default"),
    ] {
        let m = metrics(&outage(kind), strategy);
        let at = format!("{strategy}, {kind:?}");
        assert!(m.amplification <= 1.11, "{at}: {}", m.amplification);
        assert!(
            m.amplification_late <= 1.02,
            "{at}: {}",
            m.amplification_late
        );
        assert!(m.r95 <= 2.0, "{at}: {}", m.r95);
        let fixed = metrics(&outage(kind), "fixed");
        assert!(
            fixed.amplification > 2.9,
            "{kind:?}: {}",
            fixed.amplification
        );
    }
}

#[test]
fn the_default_quota_follows_the_load_not_the_number_of_clients() {
    // S4: the same 700 req/s over 10 and 1000 clients. A per-client quota multiplies the
    // fleet's retries by 100; the traffic-sized one (retry-core's own) does not.
    let split = |clients: u32| {
        let mut config = outage(FaultKind::Outage);
        config.layers[0].instances = clients;
        config.rate = 700.0 / f64::from(clients);
        config
    };
    let few = metrics(&split(10), "default").amplification;
    let many = metrics(&split(1000), "default").amplification;
    assert!(many / few <= 1.02, "default: {few} -> {many}");
    let per_client = metrics(&split(1000), "aws-2026").amplification;
    assert!(per_client > 1.5, "aws-2026 at 1000 clients: {per_client}");
}

#[test]
fn three_retrying_layers_multiply_fixed_retries_to_27() {
    let mut config = outage(FaultKind::Outage);
    for _ in 0..2 {
        config.layers.push(LayerConfig {
            instances: 10,
            attempt_timeout: SECOND,
            deadline: SECOND,
            retries: true,
        });
    }
    assert_eq!(metrics(&config, "fixed").amplification, 27.0);
    let ours = metrics(&config, "aws-2026").amplification;
    assert!(ours < 1.2, "aws-2026 with three layers: {ours}");
    for layer in &mut config.layers[1..] {
        layer.retries = false;
    }
    assert_eq!(metrics(&config, "fixed").amplification, 3.0);
}

#[test]
fn throttled_clients_honor_retry_after() {
    let config = outage(FaultKind::Throttle {
        rate: 500.0,
        burst: 50.0,
        retry_after: SECOND,
    });
    for strategy in ["default", "aws-classic", "aws-2026", "adaptive", "grpc"] {
        let m = metrics(&config, strategy);
        assert_eq!(m.retry_after_violations, 0.0, "{strategy}");
        assert!(m.r95 <= 10.0, "{strategy}: R95 {}", m.r95);
        if strategy != "adaptive" {
            // Adaptive mode queues first attempts for a permit; see the README of docs/sim.
            assert!(
                m.goodput_normalized >= 0.95,
                "{strategy}: {}",
                m.goodput_normalized
            );
        }
    }
    // The adaptive limiter keeps most attempts under the limit: far fewer 429s than standard
    // mode.
    let adaptive = metrics(&config, "adaptive").share_429;
    let standard = metrics(&config, "aws-classic").share_429;
    assert!(
        adaptive < standard / 3.0,
        "adaptive {adaptive}, standard {standard}"
    );
    assert!(metrics(&config, "fixed").retry_after_violations > 0.0);
}

#[test]
fn after_the_limit_rises_adaptive_mode_regains_ninety_percent_within_ten_seconds() {
    // S3's throttling at 500/s lifts at 180 s: the limit rises to the offered 700/s. T90 is
    // the time until a second's successes are back at 90 % of those before the throttling.
    let config = outage(FaultKind::Throttle {
        rate: 500.0,
        burst: 50.0,
        retry_after: SECOND,
    });
    let adaptive = metrics(&config, "adaptive");
    assert!(!adaptive.t90_censored);
    assert!(adaptive.t90 <= 10.0, "adaptive: T90 {}", adaptive.t90);
    // Without a limiter the rate is back as soon as the throttling ends.
    let standard = metrics(&config, "default");
    assert!(standard.t90 <= 1.0, "default: T90 {}", standard.t90);
    // Before the fault ends there is nothing to regain: a run without an end has no T90.
    let mut endless = config.clone();
    endless.horizon = 150 * SECOND;
    assert!(metrics(&endless, "adaptive").t90.is_nan());
}

#[test]
fn judging_latency_delivers_most_of_a_brownout_s_capacity() {
    // S2's brownout: half the workers gone for 60 s, the queue holding a second of work.
    let config = outage(FaultKind::Brownout { capacity: 0.5 });
    let latency = metrics(&config, "adaptive-latency");
    let timeouts = metrics(&config, "adaptive-timeouts");
    assert!(
        latency.goodput_normalized >= 0.75,
        "adaptive-latency: {}",
        latency.goodput_normalized
    );
    assert!(
        latency.goodput_normalized > timeouts.goodput_normalized + 0.15,
        "adaptive-latency {}, adaptive-timeouts {}",
        latency.goodput_normalized,
        timeouts.goodput_normalized
    );
    assert!(latency.wasted_work < 0.2, "{}", latency.wasted_work);
}

#[test]
fn calls_refused_locally_are_counted_by_the_scopes_that_refused_them() {
    // S3's throttling: adaptive mode sheds first attempts whose permit would come after the
    // deadline (each client's scope counts them as rate-limited); standard mode refuses none.
    let config = outage(FaultKind::Throttle {
        rate: 500.0,
        burst: 50.0,
        retry_after: SECOND,
    });
    let adaptive = metrics(&config, "adaptive");
    assert!(
        adaptive.local_rejections > 0.0,
        "{}",
        adaptive.local_rejections
    );
    assert_eq!(metrics(&config, "default").local_rejections, 0.0);
    assert_eq!(metrics(&config, "fixed").local_rejections, 0.0);
}
