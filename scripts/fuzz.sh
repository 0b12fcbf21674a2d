#!/usr/bin/env bash
# Fuzzes every cargo-fuzz target in fuzz/ for the given time and prints, per target, the inputs
# run, the crashes found and the corpus libFuzzer ended with (its final
# stat::number_of_executed_units, or its "#N DONE ... corp: N/..." line; one crash file per
# crash). Exits 1 if any target crashed or did not run.
#
#   scripts/fuzz.sh [seconds-per-target]        (default 60)
#
# Installs cargo-fuzz (the pinned version below) if it is missing. libFuzzer's instrumentation
# needs a nightly toolchain: without one the script says so and exits 0, fuzzing nothing.
#
# The seeds in fuzz/corpus/<target>/ are read, never written: what libFuzzer adds goes to
# fuzz/work/<target>/ (kept between runs, ignored by git), with the run's log beside it
# (fuzz/work/<target>.log); crash inputs go to fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

# cargo-fuzz 0.13.2 (crates.io), built with --locked (its own dependency versions) and --debug:
# it only drives cargo and libFuzzer, and an unoptimized build takes half the CPU time.
CARGO_FUZZ_VERSION=0.13.2
# An input that runs longer than this (seconds) is reported as a crash (a hang).
INPUT_TIMEOUT=10

seconds=${1:-60}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [seconds-per-target]   (a whole number of seconds, default 60)" >&2
    exit 2
fi

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: SKIPPED: no nightly toolchain (cargo-fuzz needs one: rustup toolchain install nightly)"
    exit 0
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --debug
fi
installed=$(cargo fuzz --version)
if [[ $installed != "cargo-fuzz $CARGO_FUZZ_VERSION" ]]; then
    echo "fuzz: using the installed $installed (this script pins $CARGO_FUZZ_VERSION)"
fi

echo "fuzz: building the targets ($(cargo +nightly --version))"
cargo +nightly fuzz build
mapfile -t targets < <(cargo +nightly fuzz list)
mkdir -p fuzz/work

rows=()
failed=0
for target in "${targets[@]}"; do
    echo "fuzz: $target for ${seconds}s"
    work=fuzz/work/$target
    log=fuzz/work/$target.log
    mkdir -p "$work"
    options=(-max_total_time="$seconds" -timeout="$INPUT_TIMEOUT" -print_final_stats=1)
    if [[ -f fuzz/dictionaries/$target.dict ]]; then
        options+=(-dict="fuzz/dictionaries/$target.dict")
    fi
    status=0
    cargo +nightly fuzz run "$target" "$work" "fuzz/corpus/$target" -- "${options[@]}" \
        >"$log" 2>&1 || status=$?

    executions=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    if [[ -z $executions ]]; then
        executions=$(sed -n 's/^#\([0-9]*\)[[:space:]]*DONE.*/\1/p' "$log" | tail -n 1)
    fi
    per_second=$(sed -n 's/^stat::average_exec_per_sec: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    corpus=$(sed -n 's/^#[0-9]*[[:space:]]*DONE.* corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -n 1)
    crashes=$(grep -c 'Test unit written to' "$log" || true)
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)

    if ((crashes > 0)); then
        result="CRASH: $artifact"
        failed=1
        grep -m 1 -A 3 'panicked at' "$log" || true
        echo "fuzz: reproduce: cargo +nightly fuzz run $target $artifact"
        echo "fuzz: minimize:  cargo +nightly fuzz tmin $target $artifact"
    elif ((status != 0)) || [[ -z $executions ]]; then
        result="did not run (exit $status): see $log"
        failed=1
        tail -n 20 "$log"
    else
        result=ok
    fi
    rows+=("$(printf '%-16s %8s %12s %10s %8s %8s  %s' "$target" "$seconds" \
        "${executions:--}" "${per_second:--}" "$crashes" "${corpus:--}" "$result")")
done

echo
echo "fuzz: summary ($installed, ${seconds}s per target)"
printf '%-16s %8s %12s %10s %8s %8s  %s\n' target seconds executions "exec/s" crashes corpus result
printf '%s\n' "${rows[@]}"
exit "$failed"
