//! Runs every (scenario, variant, strategy, seed) on a few threads, with a progress bar, and
//! collects the results in a fixed order: the output does not depend on thread scheduling.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use crate::metrics::RunMetrics;
use crate::scenario::Scenario;
use crate::sim::run;

/// The results of one (variant, strategy) over its seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Metrics per seed, in seed order.
    pub metrics: Vec<RunMetrics>,
    /// Attempts at the server per 100 ms bin, summed over seeds.
    pub attempts: Vec<u64>,
    /// Successful requests per 100 ms bin of completion, summed over seeds.
    pub successes: Vec<u64>,
}

/// The results of a scenario: `cells[variant][strategy]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioResult {
    /// The scenario.
    pub scenario: Scenario,
    /// Its results.
    pub cells: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, Copy)]
struct Task {
    scenario: usize,
    variant: usize,
    strategy: usize,
    seed: u32,
}

/// Runs `scenarios` on `threads` threads. The progress bar goes to stderr, and only when it is
/// a terminal and `progress` is set.
pub fn run_all(
    scenarios: &[Scenario],
    threads: usize,
    progress: bool,
) -> Result<Vec<ScenarioResult>, String> {
    let mut tasks = Vec::new();
    for (s, scenario) in scenarios.iter().enumerate() {
        for v in 0..scenario.variants.len() {
            for k in 0..scenario.strategies.len() {
                for seed in 0..scenario.seeds {
                    tasks.push(Task {
                        scenario: s,
                        variant: v,
                        strategy: k,
                        seed,
                    });
                }
            }
        }
    }
    // Longest runs first, for a balanced finish: cost ~ layers × clients' total rate × horizon.
    let cost = |t: &Task| {
        let config = &scenarios[t.scenario].variants[t.variant].config;
        config.layers.len() as f64
            * config.rate
            * f64::from(config.layers[0].instances)
            * config.horizon as f64
    };
    tasks.sort_by(|a, b| cost(b).total_cmp(&cost(a)));
    let results = Mutex::new(
        scenarios
            .iter()
            .map(|scenario| ScenarioResult {
                scenario: scenario.clone(),
                cells: scenario
                    .variants
                    .iter()
                    .map(|_| {
                        scenario
                            .strategies
                            .iter()
                            .map(|_| Cell {
                                metrics: vec![RunMetrics::default(); scenario.seeds as usize],
                                attempts: Vec::new(),
                                successes: Vec::new(),
                            })
                            .collect()
                    })
                    .collect(),
            })
            .collect::<Vec<_>>(),
    );
    let bar = if progress && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(tasks.len() as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} runs, eta {eta} {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let error = Mutex::new(None::<String>);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&task) = tasks.get(index) else {
                        break;
                    };
                    let scenario = &scenarios[task.scenario];
                    let variant = &scenario.variants[task.variant];
                    let strategy = &scenario.strategies[task.strategy];
                    match run(&variant.config, strategy, u64::from(task.seed) + 1) {
                        Ok(output) => {
                            let mut results = results.lock().unwrap_or_else(|e| e.into_inner());
                            let cell =
                                &mut results[task.scenario].cells[task.variant][task.strategy];
                            cell.metrics[task.seed as usize] = output.metrics;
                            add(&mut cell.attempts, &output.attempts);
                            add(&mut cell.successes, &output.successes);
                        }
                        Err(message) => {
                            failed.store(true, Ordering::Relaxed);
                            let mut error = error.lock().unwrap_or_else(|e| e.into_inner());
                            error.get_or_insert(format!(
                                "{} / {} / {}: {message}",
                                scenario.id, variant.name, strategy.name
                            ));
                        }
                    }
                    bar.inc(1);
                }
            });
        }
    });
    bar.finish_and_clear();
    if let Some(message) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(message);
    }
    Ok(results.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Adds a run's series to a sum (integer sums: the order of addition does not matter).
fn add(sum: &mut Vec<u64>, series: &[u32]) {
    if sum.len() < series.len() {
        sum.resize(series.len(), 0);
    }
    for (total, &value) in sum.iter_mut().zip(series) {
        *total += u64::from(value);
    }
}
