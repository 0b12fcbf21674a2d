#!/usr/bin/env bash
# README's Quick start, pasted into a new crate as written: its `[dependencies]` block and its
# program build and run, and the program prints what the README says it prints.
#
# The crates are not taken from crates.io but from this checkout (`[patch.crates-io]`), so the
# check runs before a release; everything else is resolved as a user's new crate would be.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The n-th fenced block of language $2 after the heading $1 in README.md.
block() {
    awk -v heading="$1" -v lang="$2" '
        $0 == heading { seen = 1; next }
        seen && /^## / { exit }
        seen && !inside && $0 == "```" lang { inside = 1; next }
        inside && $0 == "```" { exit }
        inside { print }
    ' "$repo/README.md"
}

mkdir -p "$work/store-client/src"
cd "$work/store-client"
{
    printf '[package]\nname = "store-client"\nversion = "0.1.0"\nedition = "2024"\n\n'
    block "## Quick start" toml
    printf '\n[patch.crates-io]\nretry-core = { path = "%s/retry-core" }\nretry-macros = { path = "%s/retry-macros" }\n' "$repo" "$repo"
} > Cargo.toml
block "## Quick start" rust > src/main.rs
block "## Quick start" text > expected.txt
[ -s src/main.rs ] && [ -s expected.txt ] || { echo "README: no Quick start program or output found"; exit 1; }

CARGO_TARGET_DIR="$repo/target/readme-quickstart" cargo run --quiet > actual.txt 2> build.txt || {
    cat build.txt
    exit 1
}
if grep -q '^warning' build.txt; then
    cat build.txt
    echo "README's Quick start builds with warnings"
    exit 1
fi
if ! diff -u expected.txt actual.txt; then
    echo "README's Quick start does not print what the README says (diff above: expected, actual)"
    exit 1
fi
echo "README Quick start: builds and runs in a new crate, output as documented"
