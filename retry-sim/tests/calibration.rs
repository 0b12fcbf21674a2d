//! S0: with independent failures and no budget binding, the simulator's attempts per request
//! and success rate match the analytic values within 1 %. Every check of a strategy that
//! retries is made where retries change the answer by well over that 1 % (`p` ≥ 0.03): a
//! strategy that never retries fails each of them.

use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
use retry_sim::goals::{self, S0_MIN_PROBABILITY};
use retry_sim::report::analytic_attempts;
use retry_sim::runner::run_all;
use retry_sim::scenario::{Options, builtin};
use retry_sim::sim::{SimConfig, run};
use retry_sim::strategy::StrategySpec;
use retry_sim::time::SECOND;

/// The failure probabilities at which `fixed` is checked against the analytic values.
const FIXED_PROBABILITIES: [f64; 4] = [0.1, 0.5, 0.9, 1.0];

/// The cells where `retry-core`'s strategies are checked: their quota does not bind there.
/// (aws-2026's retry cost of 14 drains its quota above p ≈ 0.1; at p = 0.1 it still refills.)
const OURS_UNBOUND: [(&str, f64); 4] = [
    ("aws-classic", 0.1),
    ("aws-2026", 0.1),
    ("default", 0.1),
    ("adaptive", 0.1),
];

/// A small, fast S0: 20 clients × 10 req/s for 60 s (well under capacity even at 4 attempts per
/// request), failure probability `p`, `attempts` attempts, a deadline that never cuts a retry.
fn calibration(p: f64, attempts: u32) -> SimConfig {
    let mut config = SimConfig::new();
    config.layers[0].instances = 20;
    config.layers[0].deadline = 60 * SECOND;
    config.rate = 10.0;
    config.horizon = 60 * SECOND;
    config.max_attempts = attempts;
    config.faults = FaultSchedule::new(vec![Fault {
        kind: FaultKind::Failures { probability: p },
        start: 0,
        end: u64::MAX,
    }]);
    config
}

/// Mean (attempts per request, success rate) over 4 seeds.
fn measure(config: &SimConfig, strategy: &str) -> (f64, f64) {
    let spec = StrategySpec::named(strategy).expect("a built-in strategy");
    let (mut attempts, mut success) = (0.0, 0.0);
    for seed in 1..=4 {
        let metrics = run(config, &spec, seed).expect("a valid run").metrics;
        attempts += metrics.amplification / 4.0;
        success += metrics.success_rate / 4.0;
    }
    (attempts, success)
}

fn within_1_percent(measured: f64, analytic: f64) -> bool {
    (measured / analytic - 1.0).abs() <= goals::S0_TOLERANCE
}

fn assert_within_1_percent(measured: f64, analytic: f64, what: &str) {
    let deviation = (measured / analytic - 1.0).abs();
    assert!(
        within_1_percent(measured, analytic),
        "{what}: measured {measured:.4}, analytic {analytic:.4} ({:.2} % off)",
        deviation * 100.0
    );
}

#[test]
fn no_retries_make_exactly_one_attempt_per_request() {
    for p in [0.01, 0.3, 1.0] {
        let (attempts, success) = measure(&calibration(p, 4), "none");
        assert_eq!(attempts, 1.0, "p = {p}");
        if p < 1.0 {
            assert_within_1_percent(success, 1.0 - p, &format!("none, success at p = {p}"));
        }
    }
}

#[test]
fn three_retries_at_p_0_3_make_1_417_attempts_per_request() {
    let analytic = 1.0 + 0.3 + 0.09 + 0.027;
    assert!((analytic_attempts(0.3, 4) - analytic).abs() < 1e-12);
    for strategy in ["fixed", "fixed-backoff", "aws-classic", "adaptive"] {
        let (attempts, success) = measure(&calibration(0.3, 4), strategy);
        assert_within_1_percent(attempts, analytic, strategy);
        assert_within_1_percent(success, 1.0 - 0.3f64.powi(4), strategy);
    }
}

#[test]
fn fixed_retries_match_the_analytic_values_for_every_p() {
    for p in FIXED_PROBABILITIES {
        for attempts in [3, 4] {
            let (measured, success) = measure(&calibration(p, attempts), "fixed");
            let what = format!("fixed, p = {p}, {attempts} attempts");
            assert_within_1_percent(measured, analytic_attempts(p, attempts), &what);
            if p < 1.0 {
                assert_within_1_percent(success, 1.0 - p.powi(attempts as i32), &what);
            }
        }
    }
}

#[test]
fn ours_match_while_the_quota_does_not_bind() {
    for (strategy, p) in OURS_UNBOUND {
        let (attempts, _) = measure(&calibration(p, 3), strategy);
        assert_within_1_percent(
            attempts,
            analytic_attempts(p, 3),
            &format!("{strategy}, p = {p}"),
        );
    }
}

#[test]
fn a_quota_caps_retries_when_every_attempt_fails() {
    // p = 1: fixed retries make all 4 attempts; the quota lets a client retry only while it
    // lasts (500 / 5 = 100 retries per client for aws-classic, 500 / 14 = 35 for aws-2026 and
    // for the default, whose scopes are younger than their 60 s window for the whole run).
    let (fixed, _) = measure(&calibration(1.0, 4), "fixed");
    assert!((fixed - 4.0).abs() < 0.01, "fixed {fixed}");
    let (classic, _) = measure(&calibration(1.0, 4), "aws-classic");
    let (aws, _) = measure(&calibration(1.0, 4), "aws-2026");
    let (default, _) = measure(&calibration(1.0, 4), "default");
    assert!(
        classic < 1.5 && aws < classic && default < 1.1,
        "aws-classic {classic}, aws-2026 {aws}, default {default}"
    );
}

#[test]
fn a_strategy_that_never_retries_fails_every_check_of_a_retrying_one() {
    let checked = FIXED_PROBABILITIES
        .iter()
        .flat_map(|&p| [(p, 3), (p, 4)])
        .chain(OURS_UNBOUND.iter().map(|&(_, p)| (p, 3)))
        .chain([(0.3, 4)]);
    for (p, attempts) in checked {
        assert!(p >= S0_MIN_PROBABILITY, "p = {p} cannot tell");
        let (never, _) = measure(&calibration(p, attempts), "none");
        assert_eq!(never, 1.0);
        assert!(
            !within_1_percent(never, analytic_attempts(p, attempts)),
            "p = {p}, {attempts} attempts: one attempt per request passes"
        );
    }
    // Where the old check ran, at p = 0.01, it would have passed.
    assert!(within_1_percent(1.0, analytic_attempts(0.01, 3)));
}

/// S0 as the simulator's default run has it (shortened), for `none` and `default`.
fn short_s0() -> Vec<retry_sim::runner::ScenarioResult> {
    let options = Options {
        duration: Some(30.0),
        seeds: 2,
        strategies: ["none", "default"]
            .into_iter()
            .map(|name| StrategySpec::named(name).expect("built in"))
            .collect(),
        scenario_extras: false,
        ..Options::default()
    };
    let s0 = builtin("s0", &options).expect("s0");
    run_all(&[s0], 2, false).expect("runs")
}

#[test]
fn the_s0_goal_checks_the_default_only_where_it_can_fail_and_fails_a_default_that_never_retries() {
    let mut results = short_s0();
    let default_rows = |results: &[retry_sim::runner::ScenarioResult]| {
        goals::check(results)
            .into_iter()
            .filter(|row| row.strategy == "default")
            .map(|row| (row.scope, row.met))
            .collect::<Vec<_>>()
    };
    // Checked at p = 0.1 and 0.3 only: its quota binds from p = 0.5, and p = 0.01 cannot tell.
    let checked = |met| vec![("S0 p=0.1".to_owned(), met), ("S0 p=0.3".to_owned(), met)];
    assert_eq!(default_rows(&results), checked(true));
    // The same goal, given the results of a strategy that never retries as the default's.
    let never = results[0]
        .cells
        .iter()
        .map(|row| row[0].clone())
        .collect::<Vec<_>>();
    for (row, never) in results[0].cells.iter_mut().zip(never) {
        row[1] = never;
    }
    assert_eq!(default_rows(&results), checked(false));
}

/// F3 shortened and shrunk: 100 processes × 7/s (the same 700/s into 500/s), 200 s, one seed,
/// per-process and fleet mode.
fn short_f3() -> Vec<retry_sim::runner::ScenarioResult> {
    let options = Options {
        clients: Some(100),
        load: Some(7.0),
        duration: Some(200.0),
        seeds: 1,
        strategies: Vec::new(),
        scenario_extras: true,
        ..Options::default()
    };
    let mut f3 = builtin("f3", &options).expect("f3");
    f3.strategies.retain(|spec| !spec.name.ends_with("+naive"));
    run_all(&[f3], 2, false).expect("runs")
}

#[test]
fn the_fleet_goals_check_fleet_mode_and_fail_per_process_figures() {
    let mut results = short_f3();
    let fleet_rows = |results: &[retry_sim::runner::ScenarioResult]| {
        goals::check(results)
            .into_iter()
            .filter(|row| row.strategy == "default-adaptive+fleet")
            .map(|row| (row.goal, row.measured.mean, row.met))
            .collect::<Vec<_>>()
    };
    let rows = fleet_rows(&results);
    let goals: Vec<&str> = rows.iter().map(|(goal, _, _)| goal.as_str()).collect();
    assert_eq!(
        goals,
        [
            "F3 429 share",
            "F3 goodput / 500/s limit",
            "F3 admitted, peak 10 s / limit",
            "F3 admitted, peak 1 s / limit"
        ]
    );
    let fleet_429 = rows[0].1;
    // The per-process arm's results given as fleet mode's: its 429 share fails the goal.
    let names: Vec<&str> = results[0]
        .scenario
        .strategies
        .iter()
        .map(|spec| spec.name.as_str())
        .collect();
    assert_eq!(names, ["default-adaptive", "default-adaptive+fleet"]);
    let per_process = results[0].cells[0][0].clone();
    results[0].cells[0][1] = per_process;
    let rows = fleet_rows(&results);
    assert!(rows[0].1 > fleet_429, "{} against {fleet_429}", rows[0].1);
    assert!(!rows[0].2, "{rows:?}");
}
