//! `retry-sim`: runs the retry storm scenarios and writes markdown tables and SVG plots.
//!
//! ```text
//! cargo run -p retry-sim --release                        # every scenario, every strategy
//! cargo run -p retry-sim --release -- -s s1,s3 --seeds 5  # a subset
//! cargo run -p retry-sim --release -- --config retry-sim/examples/my-service.toml
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use retry_sim::fleet::arm::{DEFAULT_BETA_PPM, FleetTuning};
use retry_sim::fleet::scenarios::FLEET_IDS;
use retry_sim::fleet::sweep;
use retry_sim::hedge::scenarios::HEDGE_IDS;
use retry_sim::scenario::{IDS, Options, Scenario, builtin};
use retry_sim::strategy::{BUILT_IN, StrategySpec};
use retry_sim::time::from_duration;
use retry_sim::{config, goals, plot, report, runner, runs};

/// A deterministic simulation of retry storms that drives retry-core's real strategies.
#[derive(Debug, Parser)]
#[command(name = "retry-sim", version, about, long_about = None)]
struct Cli {
    /// Scenarios to run, comma-separated (s0 … s6, or `all` for those; f1, f3, ff, or `fleet`
    /// for those; fsweep; h1, hs1, hs3, or `hedge` for those), or `shapes`: the shape sweep of
    /// fleet mode against local mode and a static split (`--shapes`, `--first-shape`).
    #[arg(short, long, default_value = "all", value_delimiter = ',')]
    scenario: Vec<String>,

    /// Strategies to compare, comma-separated, or `all` (the ten built-ins). Also:
    /// adaptive-2026, aws-2026-shared; hedging: hedge-<delay> (retry-core's, over `default`;
    /// <strategy>+hedge-<delay> over another), tower-hedge-p<percentile>, grpc-hedging-<delay>.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    strategy: Vec<String>,

    /// Seeds per (scenario variant, strategy); results are mean ± 95 % CI over them.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    seeds: u32,

    /// Number of clients (S4 varies its own; it splits clients × load over 10, 100, 1000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    clients: Option<u32>,

    /// Requests per second per client.
    #[arg(long)]
    load: Option<f64>,

    /// Seconds of arrivals per run (default: 600, 120 for S0).
    #[arg(long)]
    duration: Option<f64>,

    /// Run S0 for 600 s too (the issue's horizon for every scenario).
    #[arg(long)]
    full: bool,

    /// Closed-loop clients (next request a think time after the previous one ends).
    #[arg(long)]
    closed_loop: bool,

    /// Callers do not cancel calls at their deadline: the deadline only stops new retries
    /// (`RetryConfig::timeout`).
    #[arg(long)]
    no_cancel: bool,

    /// Fleet mode's limiter beta (the fleet scenarios' `+fleet` arms), within (0, 1).
    #[arg(long, default_value_t = DEFAULT_BETA_PPM as f64 / 1e6)]
    beta: f64,

    /// Fleet mode's sync interval, e.g. `1s`, `500ms` (the fleet scenarios' `+fleet` arms).
    #[arg(long, default_value = "1s", value_parser = parse_interval)]
    sync_interval: Duration,

    /// The shape sweep's shapes: how many (seeds `--first-shape` onwards).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    shapes: u32,

    /// The shape sweep's first seed.
    #[arg(long, default_value_t = 1)]
    first_shape: u64,

    /// The shape sweep's callers wait at most this for a send permit, e.g. `100ms` (adaptive
    /// mode's `max_wait` in local and fleet mode, the longest wait for a turn in the static
    /// split); by default until their deadline (5 s).
    #[arg(long, value_parser = parse_interval)]
    max_wait: Option<Duration>,

    /// The shape sweep on these seeds only, comma-separated (instead of `--shapes`).
    #[arg(long, value_delimiter = ',')]
    shape_seeds: Vec<u64>,

    /// The shape sweep's table made again from the `shapes.csv` of an earlier sweep (run
    /// nothing): its figures with this simulator's report, written to `--out`.
    #[arg(long)]
    from_csv: Option<PathBuf>,

    /// With `--shape-seeds`: write each shape's runs second by second to
    /// `trace-<seed>-<arm>.csv` too, and fleet mode's store steps (each report, the store's
    /// state after it and the lease) to `trace-<seed>-store.csv`.
    #[arg(long)]
    trace: bool,

    /// The `runs.csv` of an earlier run of the same scenarios (another build, say): each
    /// figure's difference from it seed by seed, averaged with its 95 % confidence interval,
    /// written to `paired.md` (the shape sweep compares by its `shapes.csv` instead).
    #[arg(long)]
    paired_with: Option<PathBuf>,

    /// Only these variants of each scenario, by name, comma-separated (e.g. `shape 1,shape 6`
    /// for two of H1's shapes); every variant by default.
    #[arg(long, value_delimiter = ',')]
    variant: Vec<String>,

    /// The seed H1's 8 drawn latency shapes come from (default 27: the shapes of
    /// docs/sim/hedging.md); another seed draws shapes named `shape <seed>.<i>`.
    #[arg(long)]
    hedge_shape_seed: Option<u64>,

    /// Run the service described in this TOML file instead of the built-in scenarios.
    #[arg(long)]
    config: Option<PathBuf>,

    /// Directory for the markdown tables and SVG plots.
    #[arg(long, default_value = "target/sim")]
    out: PathBuf,

    /// Worker threads (default: the available parallelism).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,

    /// Do not write SVG plots.
    #[arg(long)]
    no_plots: bool,

    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    retry_core::config::parse_duration(text).map_err(|error| error.to_string())
}

fn fleet_tuning(cli: &Cli) -> Result<FleetTuning, String> {
    let tuning = FleetTuning {
        beta_ppm: (cli.beta * 1e6).round() as u64,
        sync_interval: from_duration(cli.sync_interval),
        ..FleetTuning::default()
    };
    tuning.validate().map(|()| tuning)
}

fn strategies(names: &[String]) -> Result<Vec<StrategySpec>, String> {
    let mut specs = Vec::new();
    for name in names {
        let name = name.trim();
        if name.eq_ignore_ascii_case("all") {
            for built_in in BUILT_IN {
                specs.push(StrategySpec::named(built_in)?);
            }
        } else if !name.is_empty() {
            specs.push(StrategySpec::named(name)?);
        }
    }
    if specs.is_empty() {
        return Err("no strategy selected".into());
    }
    Ok(specs)
}

fn scenarios(cli: &Cli) -> Result<Vec<Scenario>, String> {
    if let Some(path) = &cli.config {
        return Ok(vec![config::load(path)?]);
    }
    if let Some(load) = cli.load
        && !(load.is_finite() && load > 0.0)
    {
        return Err(format!(
            "--load must be a positive number of requests per second, not {load}"
        ));
    }
    if let Some(duration) = cli.duration
        && !(duration.is_finite() && duration >= 1.0)
    {
        return Err(format!(
            "--duration must be at least 1 second, not {duration}"
        ));
    }
    let options = Options {
        clients: cli.clients,
        load: cli.load,
        duration: cli.duration,
        seeds: cli.seeds,
        full: cli.full,
        closed_loop: cli.closed_loop,
        cancel_at_deadline: !cli.no_cancel,
        scenario_extras: cli
            .strategy
            .iter()
            .all(|s| s.trim().eq_ignore_ascii_case("all")),
        strategies: strategies(&cli.strategy)?,
        fleet: fleet_tuning(cli)?,
        hedge_shape_seed: cli.hedge_shape_seed,
    };
    let mut ids: Vec<&str> = Vec::new();
    for id in &cli.scenario {
        let id = id.trim();
        if id.eq_ignore_ascii_case("all") {
            ids.extend(IDS);
        } else if id.eq_ignore_ascii_case("fleet") {
            ids.extend(FLEET_IDS);
        } else if id.eq_ignore_ascii_case("hedge") {
            ids.extend(HEDGE_IDS);
        } else if !id.is_empty() {
            ids.push(id);
        }
    }
    ids.dedup();
    let mut scenarios = ids
        .into_iter()
        .map(|id| builtin(&id.to_ascii_lowercase(), &options))
        .collect::<Result<Vec<_>, _>>()?;
    keep_variants(&mut scenarios, &cli.variant)?;
    Ok(scenarios)
}

/// Keeps the variants named in `names` (all when it is empty); an error when a name matches
/// no variant of any scenario, or a scenario is left with none.
fn keep_variants(scenarios: &mut Vec<Scenario>, names: &[String]) -> Result<(), String> {
    let names: Vec<&str> = names.iter().map(|name| name.trim()).collect();
    if names.is_empty() {
        return Ok(());
    }
    for name in &names {
        let known = scenarios
            .iter()
            .any(|s| s.variants.iter().any(|v| v.name == *name));
        if !known {
            let all: Vec<&str> = scenarios
                .iter()
                .flat_map(|s| s.variants.iter().map(|v| v.name.as_str()))
                .collect();
            return Err(format!(
                "--variant `{name}` is no variant of the scenarios chosen; they have: {}",
                all.join(", ")
            ));
        }
    }
    for scenario in scenarios.iter_mut() {
        scenario
            .variants
            .retain(|variant| names.contains(&variant.name.as_str()));
    }
    scenarios.retain(|scenario| !scenario.variants.is_empty());
    Ok(())
}

/// The shape sweep: its table and hardest shapes printed, with every shape's figures in
/// `shapes.csv` and the table in `shapes.md`.
fn run_shapes(cli: &Cli, threads: usize) -> Result<(), String> {
    if let Some(path) = &cli.from_csv {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let results = sweep::from_csv(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let table = sweep::markdown(&results);
        write_out(&cli.out, "shapes.md", &table)?;
        println!("{table}");
        return Ok(());
    }
    let seeds: Vec<u64> = if cli.shape_seeds.is_empty() {
        (cli.first_shape..cli.first_shape + u64::from(cli.shapes)).collect()
    } else {
        cli.shape_seeds.clone()
    };
    eprintln!(
        "retry-sim: {} shapes × 3 arms on {threads} thread(s)",
        seeds.len()
    );
    let started = Instant::now();
    let max_wait = cli.max_wait.map(from_duration);
    let results = sweep::sweep(&seeds, max_wait, threads)?;
    let table = sweep::markdown(&results);
    write_out(&cli.out, "shapes.md", &table)?;
    write_out(&cli.out, "shapes.csv", &sweep::csv(&results))?;
    if cli.trace {
        for &seed in &seeds {
            let shape = retry_sim::fleet::shape::Shape::draw(seed).with_max_wait(max_wait);
            for (arm, name) in sweep::ARMS.iter().enumerate() {
                let trace = sweep::trace(&shape, arm)?;
                write_out(
                    &cli.out,
                    &format!("trace-{seed}-{name}.csv"),
                    &trace.seconds,
                )?;
                if let Some(steps) = &trace.store_steps {
                    write_out(&cli.out, &format!("trace-{seed}-store.csv"), steps)?;
                }
            }
        }
    }
    println!("{table}");
    eprintln!(
        "retry-sim: {} shapes in {:.1} s; every shape's figures in {}",
        seeds.len(),
        started.elapsed().as_secs_f64(),
        cli.out.join("shapes.csv").display()
    );
    Ok(())
}

/// The runs of the `runs.csv` at `path`, to pair `scenarios`' runs with: an error unless one
/// of them is a run of `scenarios`.
fn earlier_runs(path: &Path, scenarios: &[Scenario]) -> Result<Vec<runs::RunRow>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let earlier = runs::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if !runs::pairs_with(scenarios, &earlier) {
        return Err(format!(
            "--paired-with: {} holds no run of these scenarios, variants, strategies and seeds",
            path.display()
        ));
    }
    Ok(earlier)
}

/// Writes `text` to the file `name` in `dir`, made if missing.
fn write_out(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn run(cli: &Cli) -> Result<(), String> {
    let threads = cli.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |n| n as usize,
    );
    if cli
        .scenario
        .iter()
        .any(|id| id.trim().eq_ignore_ascii_case("shapes"))
    {
        if cli.paired_with.is_some() {
            return Err(
                "--paired-with compares scenarios' runs; the shape sweep's shapes are \
                        compared by their shapes.csv"
                    .to_owned(),
            );
        }
        return run_shapes(cli, threads);
    }
    let scenarios = scenarios(cli)?;
    let earlier = cli
        .paired_with
        .as_deref()
        .map(|path| earlier_runs(path, &scenarios))
        .transpose()?;
    let runs: usize = scenarios.iter().map(Scenario::runs).sum();
    eprintln!(
        "retry-sim: {} scenario(s), {runs} runs on {threads} thread(s)",
        scenarios.len()
    );
    let started = Instant::now();
    let results = runner::run_all(&scenarios, threads, !cli.quiet)?;
    let elapsed = started.elapsed();

    let write = |name: &str, text: &str| write_out(&cli.out, name, text);
    let goals = goals::goals_markdown(&results);
    let header = format!(
        "Scenarios: {}. Seeds: {}. Strategies: {}.",
        scenarios
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        scenarios.first().map_or(0, |s| s.seeds),
        scenarios
            .first()
            .map(|s| s
                .strategies
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "))
            .unwrap_or_default(),
    );
    write(
        "results.md",
        &report::full_markdown(&results, &header, &goals),
    )?;
    write("runs.csv", &runs::csv(&results))?;
    if let Some(earlier) = &earlier {
        write("paired.md", &runs::paired_markdown(&results, earlier)?)?;
        eprintln!(
            "retry-sim: paired with the earlier runs in {}",
            cli.out.join("paired.md").display()
        );
    }
    for result in &results {
        write(
            &format!("{}.md", plot::slug(&result.scenario.id)),
            &report::scenario_markdown(result),
        )?;
    }
    if !goals.is_empty() {
        write("goals.md", &goals)?;
    }
    let mut plots = 0;
    if !cli.no_plots {
        for result in &results {
            plots += plot::write_plots(result, &cli.out)?.len();
        }
    }
    if !goals.is_empty() {
        println!("{goals}");
    }
    eprintln!(
        "retry-sim: {runs} runs in {:.1} s; tables in {}, {plots} plot(s)",
        elapsed.as_secs_f64(),
        cli.out.join("results.md").display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
