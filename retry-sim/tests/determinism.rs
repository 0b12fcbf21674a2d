//! Two runs with the same seeds give identical output, whatever the number of threads.

use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
use retry_sim::scenario::{Options, Scenario, Variant};
use retry_sim::sim::{SimConfig, run};
use retry_sim::strategy::StrategySpec;
use retry_sim::time::SECOND;
use retry_sim::{plot, report, runner};

/// S1 and S3, shrunk: 20 clients, 60 s, faults at 20 s.
fn small() -> Scenario {
    let base = || {
        let mut config = SimConfig::new();
        config.layers[0].instances = 20;
        config.horizon = 60 * SECOND;
        config
    };
    let mut outage = base();
    outage.faults = FaultSchedule::new(vec![Fault::at(FaultKind::Outage, 20.0, 10.0)]);
    let mut throttle = base();
    throttle.faults = FaultSchedule::new(vec![Fault::at(
        FaultKind::Throttle {
            rate: 100.0,
            burst: 10.0,
            retry_after: SECOND,
        },
        20.0,
        20.0,
    )]);
    Scenario {
        id: "small".into(),
        title: "small".into(),
        description: "S1 and S3, shrunk".into(),
        variants: vec![
            Variant {
                name: "outage".into(),
                config: outage,
            },
            Variant {
                name: "throttle".into(),
                config: throttle,
            },
        ],
        strategies: Options::default().strategies,
        seeds: 2,
    }
}

#[test]
fn one_seed_gives_identical_runs() {
    let config = &small().variants[1].config;
    for name in ["adaptive", "aws-2026", "sre", "grpc"] {
        let spec = StrategySpec::named(name).unwrap();
        let a = run(config, &spec, 7).unwrap();
        let b = run(config, &spec, 7).unwrap();
        // Debug formatting compares NaNs (undefined metrics) as equal.
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        let c = run(config, &spec, 8).unwrap();
        assert_ne!(
            a.attempts, c.attempts,
            "{name}: another seed is another run"
        );
    }
}

#[test]
fn reports_and_plots_do_not_depend_on_threads() {
    let scenario = small();
    let one = runner::run_all(std::slice::from_ref(&scenario), 1, false).unwrap();
    let two = runner::run_all(std::slice::from_ref(&scenario), 2, false).unwrap();
    assert!(
        format!("{one:?}") == format!("{two:?}"),
        "1 and 2 threads differ"
    );
    assert_eq!(
        report::scenario_markdown(&one[0]),
        report::scenario_markdown(&two[0])
    );

    let dir = std::env::temp_dir().join(format!("retry-sim-determinism-{}", std::process::id()));
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let files_a = plot::write_plots(&one[0], &a).unwrap();
    let files_b = plot::write_plots(&two[0], &b).unwrap();
    assert_eq!(files_a.len(), 4);
    for (fa, fb) in files_a.iter().zip(&files_b) {
        let (sa, sb) = (std::fs::read(fa).unwrap(), std::fs::read(fb).unwrap());
        assert!(sa.starts_with(b"<svg"), "{}", fa.display());
        assert_eq!(sa, sb, "{}", fa.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
