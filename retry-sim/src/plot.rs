//! SVG plots (plotters, SVG backend only): goodput and attempt rate over time, one line per
//! strategy, averaged over the seeds.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::metrics::{BIN, BINS_PER_SECOND};
use crate::runner::ScenarioResult;
use crate::time::{Nanos, SECOND};

/// Line colors, one per strategy (cycled).
const COLORS: [RGBColor; 12] = [
    RGBColor(120, 120, 120),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
    RGBColor(0, 0, 0),
    RGBColor(0, 0, 128),
];

/// A file-name-safe version of `text`.
///
/// ```
/// assert_eq!(retry_sim::plot::slug("S5 every layer / p=0.3"), "s5-every-layer-p-0-3");
/// ```
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// One line: a name and its (time s, value) points.
type Line = (String, Vec<(f64, f64)>);

/// The time range a variant's plots show: 30 s before the fault to 60 s after it (the whole
/// run when there is no timed fault).
fn plot_range(result: &ScenarioResult, variant: usize) -> (Nanos, Nanos) {
    let config = &result.scenario.variants[variant].config;
    match config.faults.window() {
        Some((start, end)) => (
            start.saturating_sub(30 * SECOND),
            (end + 60 * SECOND).min(config.horizon),
        ),
        None => (0, config.horizon),
    }
}

/// Sums `series` (100 ms bins, summed over `seeds`) into `per_bin`-bin points: a rate per
/// second averaged over the seeds, at the middle of each point's span.
fn points(series: &[u64], seeds: u32, range: (Nanos, Nanos), per_bin: usize) -> Vec<(f64, f64)> {
    let first = (range.0 / BIN) as usize;
    let last = ((range.1 / BIN) as usize).min(series.len());
    let span = per_bin as f64 * BIN as f64 / SECOND as f64;
    (first..last)
        .step_by(per_bin)
        .map(|start| {
            let end = (start + per_bin).min(last);
            let total: u64 = series[start..end].iter().sum();
            let t = (start as f64 + per_bin as f64 / 2.0) * BIN as f64 / SECOND as f64;
            (t, total as f64 / f64::from(seeds.max(1)) / span)
        })
        .collect()
}

/// Writes `{id}-{variant}-goodput.svg` (1 s bins) and `{id}-{variant}-attempts.svg` (100 ms
/// bins, log scale) for every variant into `dir`; returns the files written.
pub fn write_plots(result: &ScenarioResult, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let scenario = &result.scenario;
    let mut files = Vec::new();
    for (v, variant) in scenario.variants.iter().enumerate() {
        let range = plot_range(result, v);
        let base = slug(&format!("{} {}", scenario.id, variant.name));
        let lines = |successes: bool, per_bin: usize| -> Vec<Line> {
            scenario
                .strategies
                .iter()
                .enumerate()
                .map(|(k, strategy)| {
                    let cell = &result.cells[v][k];
                    let series = if successes {
                        &cell.successes
                    } else {
                        &cell.attempts
                    };
                    (
                        strategy.name.clone(),
                        points(series, scenario.seeds, range, per_bin),
                    )
                })
                .collect()
        };
        let title = format!("{} — {}", scenario.title, variant.name);
        let goodput = dir.join(format!("{base}-goodput.svg"));
        draw(
            &goodput,
            &format!("{title}: goodput"),
            "successful requests/s (by completion, 1 s bins)",
            &lines(true, BINS_PER_SECOND),
            false,
        )?;
        files.push(goodput);
        let attempts = dir.join(format!("{base}-attempts.svg"));
        draw(
            &attempts,
            &format!("{title}: attempt rate"),
            "attempts/s at the server (100 ms bins, log scale)",
            &lines(false, 1),
            true,
        )?;
        files.push(attempts);
    }
    Ok(files)
}

fn draw(path: &Path, title: &str, y_label: &str, lines: &[Line], log: bool) -> Result<(), String> {
    let error = |e: &dyn std::fmt::Display| format!("plotting {}: {e}", path.display());
    let (x0, x1) = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let top = lines
        .iter()
        .flat_map(|(_, points)| points.iter().map(|p| p.1))
        .fold(1.0f64, f64::max);
    // Headroom for the legend in the upper left (linear) or lower right (log) corner.
    let y_max = if log { top * 2.0 } else { top * 1.6 };
    if !(x0.is_finite() && x1.is_finite() && x1 > x0) {
        return Ok(());
    }
    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| error(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let legend = |chart_lines: &[Line]| -> Vec<(String, RGBColor)> {
        chart_lines
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.clone(), COLORS[i % COLORS.len()]))
            .collect()
    };
    if log {
        let mut chart = builder
            .build_cartesian_2d(x0..x1, (1.0f64..y_max).log_scale())
            .map_err(|e| error(&e))?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_label)
            .draw()
            .map_err(|e| error(&e))?;
        for ((_, points), (name, color)) in lines.iter().zip(legend(lines)) {
            let clamped = points.iter().map(|&(x, y)| (x, y.max(1.0)));
            chart
                .draw_series(LineSeries::new(clamped, color.stroke_width(1)))
                .map_err(|e| error(&e))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| error(&e))?;
    } else {
        let mut chart = builder
            .build_cartesian_2d(x0..x1, 0.0f64..y_max)
            .map_err(|e| error(&e))?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_label)
            .draw()
            .map_err(|e| error(&e))?;
        for ((_, points), (name, color)) in lines.iter().zip(legend(lines)) {
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(1),
                ))
                .map_err(|e| error(&e))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| error(&e))?;
    }
    root.present().map_err(|e| error(&e))?;
    Ok(())
}
