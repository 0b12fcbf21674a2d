//! Success-path calls for an instruction count under callgrind, which other processes on the
//! machine do not disturb (criterion's times do move with them):
//!
//! ```text
//! cargo build --release -p retry-bench --example instructions
//! valgrind --tool=callgrind target/release/examples/instructions adaptive 10000
//! valgrind --tool=callgrind target/release/examples/instructions adaptive 20000
//! ```
//!
//! The difference of the two totals over 10,000 is the instructions per call of that path
//! (`plain`, `standard` or `adaptive`), the program's start-up cancelled out.

use std::process::ExitCode;

use retry_bench::{adaptive, current_thread_runtime, op, standard, success_config};
use retry_core::retry;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(Ok(calls))) = (args.get(1), args.get(2).map(|n| n.parse::<u64>())) else {
        eprintln!("usage: instructions plain|standard|adaptive CALLS");
        return ExitCode::FAILURE;
    };
    if !["plain", "standard", "adaptive"].contains(&path.as_str()) {
        eprintln!("unknown path `{path}`: expected plain, standard or adaptive");
        return ExitCode::FAILURE;
    }
    let runtime = current_thread_runtime();
    let standard = standard(success_config());
    let adaptive = adaptive("instructions-adaptive");
    runtime.block_on(async {
        for i in 0..calls {
            let outcome = match path.as_str() {
                "standard" => retry(&standard, || op(i)).await,
                "adaptive" => retry(&adaptive, || op(i)).await,
                _ => op(i).await, // "plain", checked above
            };
            std::hint::black_box(outcome).ok();
        }
    });
    ExitCode::SUCCESS
}
