//! The example TOML file parses and runs; mistakes get clear messages.

use std::path::Path;

use retry_core::adaptive::CongestionSignals;
use retry_sim::strategy::{StrategyKind, StrategySpec};
use retry_sim::time::SECOND;
use retry_sim::{config, report, runner};

#[test]
fn every_example_file_parses() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            if let Err(error) = config::load(&path) {
                panic!("{}: {error}", path.display());
            }
            files += 1;
        }
    }
    assert!(files >= 2, "{files} example files");
}

#[test]
fn the_example_file_parses_and_runs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/my-service.toml");
    let mut scenario = config::load(&path).unwrap();
    assert_eq!(scenario.id, "my-service");
    let names: Vec<String> = scenario.strategies.iter().map(|s| s.name.clone()).collect();
    assert_eq!(
        names,
        [
            "none",
            "fixed-backoff",
            "aws-2026",
            "default",
            "adaptive",
            "mine"
        ]
    );
    let variant = &scenario.variants[0].config;
    assert_eq!(variant.layers[0].instances, 40);
    assert_eq!(variant.faults.faults().len(), 3);
    assert_eq!(scenario.strategies[5].max_attempts, Some(4));

    // Shrink it for a fast test: 100 s (the outage at 60 s for 30 s), one seed.
    scenario.variants[0].config.horizon = 100 * SECOND;
    scenario.seeds = 1;
    let results = runner::run_all(&[scenario], 2, false).unwrap();
    let markdown = report::scenario_markdown(&results[0]);
    for name in &names {
        assert!(markdown.contains(&format!("| {name} |")), "{markdown}");
    }
    let none = &results[0].cells[0][0].metrics[0];
    assert_eq!(none.amplification, 1.0);
    assert!(
        none.success_rate < 0.9,
        "the outage hurt: {}",
        none.success_rate
    );
}

#[test]
fn mistakes_are_reported_clearly() {
    let error = |text: &str| config::parse(text, "t").unwrap_err();
    assert!(
        error("colour = 1").contains("unknown field `colour`"),
        "{}",
        error("colour = 1")
    );
    let bad_duration = error("duration = \"5\"");
    assert!(
        bad_duration.contains("`duration`") && bad_duration.contains("missing unit"),
        "{bad_duration}"
    );
    let bad_strategy = error("[[strategies]]\nname = \"fancy\"");
    assert!(
        bad_strategy.contains("unknown strategy `fancy`"),
        "{bad_strategy}"
    );
    let needs_base = error("[[strategies]]\nname = \"aws-2026\"\nretry_cost = 3");
    assert!(needs_base.contains("`base` preset"), "{needs_base}");
    let bad_fault = error("[[faults]]\nkind = \"brownout\"\nstart = \"1s\"");
    assert!(
        bad_fault.contains("`faults[0].capacity` is required"),
        "{bad_fault}"
    );
    let invalid =
        error("[[strategies]]\nname = \"x\"\nbase = \"aws-classic\"\ninitial_backoff = \"30s\"");
    assert!(
        invalid.contains("strategy `x`") && invalid.contains("initial_backoff"),
        "{invalid}"
    );
    let probability = error("[[faults]]\nkind = \"failures\"\nprobability = 1.5");
    assert!(
        probability.contains("`faults[0].probability` must be between 0 and 1"),
        "{probability}"
    );
    let zero = error("[clients]\ncount = 0");
    assert!(zero.contains("at least one client"), "{zero}");
    let signals = error(
        "[[strategies]]\nname = \"x\"\nbase = \"default\"\nmode = \"adaptive\"\ncongestion = \"latency\"",
    );
    assert!(
        signals.contains("`strategies[0].congestion`: unknown `latency`")
            && signals.contains("throttling-timeouts-and-latency"),
        "{signals}"
    );
}

#[test]
fn a_strategy_of_ones_own_chooses_its_congestion_signals() {
    let scenario = config::parse(
        "[[strategies]]\nname = \"mine\"\nbase = \"default\"\nmode = \"adaptive\"\n\
         congestion = \"throttling-timeouts-and-latency\"",
        "t",
    )
    .unwrap();
    let StrategyKind::Ours { congestion, .. } = &scenario.strategies[0].kind else {
        panic!("a retry-core strategy");
    };
    assert_eq!(*congestion, CongestionSignals::ThrottlingTimeoutsAndLatency);
    // The built-in rows keep theirs: by their settings now, not by their names.
    let row = |name: &str| match StrategySpec::named(name).unwrap().kind {
        StrategyKind::Ours { congestion, .. } => congestion,
        StrategyKind::Baseline { .. } => panic!("{name} is a baseline"),
    };
    assert_eq!(row("adaptive"), CongestionSignals::Throttling);
    assert_eq!(
        row("adaptive-timeouts"),
        CongestionSignals::ThrottlingAndTimeouts
    );
    assert_eq!(
        row("adaptive-latency"),
        CongestionSignals::ThrottlingTimeoutsAndLatency
    );
}

#[test]
fn a_long_tail_is_described_by_its_keys() {
    use retry_sim::latency::TailLatency;
    use retry_sim::server::ServiceTime;
    let scenario = config::parse(
        "[service]\ndistribution = \"tail\"\nservice_time = \"3ms\"\nsigma = 0.5\n\
         slow_share = 0.012\nslow_time = \"600ms\"\nslow_sigma = 0.8",
        "t",
    )
    .unwrap();
    assert_eq!(
        scenario.variants[0].config.server.service,
        ServiceTime::Tail(TailLatency::paper())
    );
    let error = |text: &str| config::parse(text, "t").unwrap_err();
    let stray = error("[service]\nslow_share = 0.01");
    assert!(stray.contains("distribution = \"tail\""), "{stray}");
    let missing = error("[service]\ndistribution = \"tail\"\nslow_share = 0.01");
    assert!(
        missing.contains("`service.slow_time` is required"),
        "{missing}"
    );
    let share = error("[service]\ndistribution = \"tail\"\nslow_share = 2.0\nslow_time = \"1s\"");
    assert!(
        share.contains("`slow_share` must be between 0 and 1"),
        "{share}"
    );
    let periods = error(
        "[service]\ndistribution = \"tail\"\nslow_share = 0.01\nslow_time = \"1s\"\n\
         slow_period_factor = 3.0",
    );
    assert!(periods.contains("`service.slow_replicas`"), "{periods}");
    let hedge = error("[[strategies]]\nname = \"tower-hedge-p200\"");
    assert!(hedge.contains("tower-hedge-p95"), "{hedge}");
}

#[test]
fn a_warmup_opens_the_window_of_a_run_without_a_fault() {
    use retry_sim::time::SECOND;
    let scenario = config::parse("duration = \"90s\"\nwarmup = \"30s\"", "w").unwrap();
    let windows = scenario.variants[0].config.windows();
    assert_eq!(windows.window, (30 * SECOND, 90 * SECOND));
    let error = |text: &str| config::parse(text, "w").unwrap_err();
    let late = error("duration = \"90s\"\nwarmup = \"90s\"");
    assert!(late.contains("before the arrivals do"), "{late}");
    let fault = error(
        "warmup = \"30s\"\n[[faults]]\nkind = \"outage\"\nstart = \"120s\"\nduration = \"60s\"",
    );
    assert!(fault.contains("without a timed fault"), "{fault}");
}
