#!/usr/bin/env python3
"""Turns criterion's results (target/criterion/**/new/) into the Markdown tables of
BENCHMARKS.md and an SVG bar chart of the success path.

    python3 benches/scripts/report.py [--criterion target/criterion] [--svg benches/plots]

Reads each benchmark's new/benchmark.json (its id) and new/estimates.json (the slope of the
linear-sampling regression when there is one, else the mean, in ns per iteration, with the 95 %
confidence interval). Prints Markdown on stdout. Standard library only.
"""

import argparse
import json
import os
import sys

TASK_CALLS = 64 * 1000  # many_tasks: one iteration is 64 tasks x 1000 calls


def load(root):
    results = {}
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "estimates.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            estimates = json.load(f)
        estimate = estimates.get("slope") or estimates["mean"]
        interval = estimate["confidence_interval"]
        results[bench["full_id"]] = (
            estimate["point_estimate"],
            interval["lower_bound"],
            interval["upper_bound"],
        )
    return results


def ns(value):
    if value >= 1e6:
        return f"{value / 1e6:.2f} ms"
    if value >= 1e3:
        return f"{value / 1e3:.2f} µs"
    if value >= 100:
        return f"{value:.0f} ns"
    if value >= 10:
        return f"{value:.1f} ns"
    return f"{value:.2f} ns"


def ci(est):
    point, low, high = est
    return f"{ns(point)} [{ns(low)}, {ns(high)}]"


def group(results, name):
    prefix = name + "/"
    return {key[len(prefix):]: value for key, value in results.items() if key.startswith(prefix)}


def table_vs_plain(rows, baseline="plain"):
    base = rows[baseline][0]
    out = ["| contender | time per call [95 % CI] | overhead over plain | ratio to plain |",
           "|---|---|---|---|"]
    for name, est in sorted(rows.items(), key=lambda item: item[1][0]):
        overhead = est[0] - base
        out.append(f"| `{name}` | {ci(est)} | {ns(overhead) if name != baseline else '—'} "
                   f"| {est[0] / base:.1f}× |")
    return "\n".join(out)


def success_table(results):
    return table_vs_plain(group(results, "success_path"))


def in_fn_table(results):
    return table_vs_plain(group(results, "success_path_in_fn"))


def variants_table(results):
    return table_vs_plain(group(results, "success_path_variants"))


def primitives_table(results):
    rows = group(results, "primitives")
    out = ["| primitive | time [95 % CI] |", "|---|---|"]
    for name, est in sorted(rows.items(), key=lambda item: item[1][0]):
        out.append(f"| `{name}` | {ci(est)} |")
    return "\n".join(out)


def retry_table(results):
    rows = group(results, "zero_backoff_retry")
    contenders = {}
    for key, est in rows.items():
        contender, attempts = key.rsplit("/", 1)
        contenders.setdefault(contender, {})[int(attempts)] = est
    attempts = sorted({a for values in contenders.values() for a in values})
    head = " | ".join(f"{a} attempt{'s' if a > 1 else ''}" for a in attempts)
    out = [f"| contender | {head} | per retry (slope 1 → {attempts[-1]}) | per retry over the loop |",
           "|---|" + "---|" * len(attempts) + "---|---|"]
    first, last = attempts[0], attempts[-1]
    slope = lambda values: (values[last][0] - values[first][0]) / (last - first)
    floor = slope(contenders["plain_loop"]) if "plain_loop" in contenders else 0.0
    for contender, values in sorted(contenders.items(), key=lambda item: slope(item[1])):
        cells = " | ".join(ns(values[a][0]) for a in attempts)
        extra = "—" if contender == "plain_loop" else ns(slope(values) - floor)
        out.append(f"| `{contender}` | {cells} | {ns(slope(values))} | {extra} |")
    return "\n".join(out)


def tokio_sleep_table(results):
    rows = group(results, "zero_backoff_retry_tokio_sleep")
    out = ["| contender (2 attempts: 1 retry, delay zero) | time per call [95 % CI] |",
           "|---|---|"]
    for name, est in sorted(rows.items(), key=lambda item: item[1][0]):
        out.append(f"| `{name}` | {ci(est)} |")
    return "\n".join(out)


def tasks_table(results):
    rows = group(results, "many_tasks")
    base = rows["no_wrapper"][0]
    out = ["| contender | per batch of 64 000 calls [95 % CI] | per call | overhead per call | ratio |",
           "|---|---|---|---|---|"]
    for name, est in sorted(rows.items(), key=lambda item: item[1][0]):
        per_call = est[0] / TASK_CALLS
        overhead = (est[0] - base) / TASK_CALLS
        out.append(f"| `{name}` | {ci(est)} | {ns(per_call)} | "
                   f"{ns(overhead) if name != 'no_wrapper' else '—'} | {est[0] / base:.2f}× |")
    return "\n".join(out)


def limiter_table(results):
    rows = group(results, "adaptive_limiter")
    out = ["| `ClientRateLimiter::try_acquire(None, now)` | time [95 % CI] |", "|---|---|"]
    for name, est in sorted(rows.items(), key=lambda item: item[1][0]):
        out.append(f"| `{name}` | {ci(est)} |")
    return "\n".join(out)


def svg_bars(rows, title, path, baseline="plain"):
    """A horizontal bar chart of the overhead over `baseline`, in ns."""
    base = rows[baseline][0]
    items = sorted(((name, est[0] - base) for name, est in rows.items() if name != baseline),
                   key=lambda item: item[1])
    width, left, bar, gap, top = 640, 190, 22, 8, 40
    scale = (width - left - 80) / max(value for _, value in items)
    height = top + len(items) * (bar + gap) + 30
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="10" y="22" font-size="14" font-weight="bold">{title}</text>']
    for i, (name, value) in enumerate(items):
        y = top + i * (bar + gap)
        color = "#d9534f" if name.startswith(("retry", "retryable")) else "#5b8def"
        lines.append(f'<text x="{left - 8}" y="{y + bar * 0.7:.0f}" text-anchor="end">{name}</text>')
        lines.append(f'<rect x="{left}" y="{y}" width="{max(value * scale, 1):.1f}" '
                     f'height="{bar}" fill="{color}"/>')
        lines.append(f'<text x="{left + max(value * scale, 1) + 6:.1f}" y="{y + bar * 0.7:.0f}">'
                     f'{value:.1f} ns</text>')
    lines.append(f'<text x="{left}" y="{height - 10}" fill="#555">overhead per call over a plain '
                 f'call ({base:.2f} ns), lower is better</text>')
    lines.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/criterion")
    parser.add_argument("--svg", default=None, help="directory for the SVG chart")
    args = parser.parse_args()
    results = load(args.criterion)
    if not results:
        sys.exit(f"no criterion results under {args.criterion}: run `cargo bench -p retry-bench`")
    sections = [
        ("Success path", success_table),
        ("Success path, each contender in a user's async fn", in_fn_table),
        ("Success path: variants and decomposition", variants_table),
        ("Primitives", primitives_table),
        ("Cost per retry, zero backoff", retry_table),
        ("Zero delay through tokio's timer", tokio_sleep_table),
        ("Many tasks", tasks_table),
        ("Adaptive limiter", limiter_table),
    ]
    for title, render in sections:
        try:
            print(f"### {title}\n\n{render(results)}\n")
        except (KeyError, ValueError) as error:
            print(f"### {title}\n\n(missing results: {error})\n")
    if args.svg:
        os.makedirs(args.svg, exist_ok=True)
        svg_bars(group(results, "success_path"), "Success path: wrapper overhead per call",
                 os.path.join(args.svg, "success_path.svg"))
        svg_bars(group(results, "success_path_in_fn"),
                 "Success path, each contender in an async fn: overhead per call",
                 os.path.join(args.svg, "success_path_in_fn.svg"))


if __name__ == "__main__":
    main()
