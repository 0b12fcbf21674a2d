//! The copies in this module against the runtime's originals: `retry_core` is a path-only
//! dev-dependency of this crate (cargo drops it from the published manifest), so these tests see
//! both sides and fail, naming the files to sync, on any value or message that differs.

use std::fmt::Debug;

use proptest::prelude::*;

use std::time::Duration;

use super::{defaults, duration, hedge, jitter, mode, preset, quota};

/// What parsing one input gave: the value or the error message.
type Outcome<T> = Result<T, String>;

/// Runs one parser, its error as its message.
fn outcome<T, E: ToString>(parse: impl FnOnce() -> Result<T, E>) -> Outcome<T> {
    parse().map_err(|error| error.to_string())
}

/// Fails unless the copy and the runtime gave the same outcome for `input`.
fn assert_same<T: PartialEq + Debug>(
    copy_file: &str,
    runtime_file: &str,
    input: &str,
    copy: Outcome<T>,
    runtime: Outcome<T>,
) {
    assert!(
        copy == runtime,
        "{copy_file} and {runtime_file} disagree on {input:?}:\n  macro's copy: {copy:?}\n  \
         runtime:      {runtime:?}\nthe copy must parse exactly like the runtime: sync \
         {copy_file} with {runtime_file}"
    );
}

// ---- durations -----------------------------------------------------------------------------

const DURATION_COPY: &str = "retry-macros/src/parse/duration.rs";
const DURATION_RUNTIME: &str = "retry-core/src/config/duration.rs";

fn check_duration(input: &str) {
    let copy = outcome(|| duration::parse_duration(input));
    let runtime = outcome(|| retry_core::config::parse_duration(input));
    assert_same(DURATION_COPY, DURATION_RUNTIME, input, copy, runtime);
}

/// Nanoseconds per unit, the units' names, and some that are not units.
const UNITS: [(&str, u128); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];
const NOT_UNITS: [&str; 10] = ["", "S", "MS", "sec", "min", "µs", "d", " s", "ss", "s s"];

/// One year in nanoseconds: the runtime's limit.
const YEAR_NANOS: u128 = 365 * 24 * 3_600_000_000_000;

/// The whole numbers around every limit a duration parser may meet, for `unit_nanos`: the
/// integer types' maxima, the largest count of the unit that fits in a year, a `u64` and a
/// `u128` of nanoseconds; each with its neighbours, as decimal strings (one past `u128::MAX`
/// included).
fn numbers_near_limits(unit_nanos: u128) -> Vec<String> {
    let limits = [
        0,
        1,
        u128::from(u8::MAX),
        u128::from(u16::MAX),
        u128::from(u32::MAX),
        u128::from(u64::MAX),
        u128::MAX,
        YEAR_NANOS / unit_nanos,
        u128::from(u64::MAX) / unit_nanos,
        u128::MAX / unit_nanos,
    ];
    let mut numbers: Vec<String> = limits
        .iter()
        .flat_map(|&limit| [limit.checked_sub(1), Some(limit), limit.checked_add(1)])
        .flatten()
        .map(|n| n.to_string())
        .collect();
    numbers.extend([
        "340282366920938463463374607431768211456".to_owned(), // u128::MAX + 1
        "9".repeat(40),
        format!("1{}", "0".repeat(39)),
        "007".to_owned(),
        format!("{}1", "0".repeat(45)),
    ]);
    numbers
}

/// Fractions: none, short, long, and malformed ones.
const FRACTIONS: [&str; 10] = [
    "",
    ".0",
    ".5",
    ".9",
    ".000000001",
    ".999999999999999999999",
    ".3333333333333333333333333333333333333333",
    ".",
    "..5",
    ".5.5",
];

/// Ways to write a value around the number: whitespace, signs, inner spaces.
fn wrappings(value: &str) -> [String; 6] {
    [
        value.to_owned(),
        format!("  {value}\t"),
        format!("\n{value}"),
        format!("-{value}"),
        format!("+{value}"),
        format!("{value} 1s"),
    ]
}

#[test]
fn durations_near_every_limit_parse_the_same() {
    let units = UNITS.iter().map(|(name, _)| *name).chain(NOT_UNITS);
    for unit in units {
        let unit_nanos = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map_or(1_000_000_000, |(_, nanos)| *nanos);
        for number in numbers_near_limits(unit_nanos) {
            for fraction in FRACTIONS {
                for input in wrappings(&format!("{number}{fraction}{unit}")) {
                    check_duration(&input);
                }
            }
        }
    }
}

#[test]
fn malformed_durations_parse_the_same() {
    for input in [
        "", " ", "ms", "-", "-ms", ".", ".s", "1", "1.", "1.s", ".5s", "1..5s", "1.5.5s", "1e3s",
        "0x10s", "1_000ms", "１s", "1 s", "1s ms", "s1", "--1s", "1ms1", "\u{a0}1s", "1s\u{a0}",
    ] {
        check_duration(input);
    }
}

proptest! {
    #[test]
    fn any_string_parses_the_same(input in any::<String>()) {
        check_duration(&input);
    }

    #[test]
    fn duration_like_strings_parse_the_same(
        input in "[ \t]{0,2}[-+]?[0-9]{0,42}(\\.[0-9]{0,30})?(ns|us|ms|s|m|h|S|sec|x|)[ ]{0,2}"
    ) {
        check_duration(&input);
    }

    #[test]
    fn numbers_of_every_size_parse_the_same(
        whole in any::<u128>(),
        digits in 0u32..=39,
        fraction in "[0-9]{0,25}",
        unit in prop::sample::select(UNITS.map(|(name, _)| name).to_vec()),
    ) {
        // Every order of magnitude, not only the huge numbers `any::<u128>()` mostly gives.
        let whole = 10u128.checked_pow(digits).map_or(whole, |bound| whole % bound);
        let dot = if fraction.is_empty() { "" } else { "." };
        check_duration(&format!("{whole}{dot}{fraction}{unit}"));
    }
}

// ---- names: mode, jitter, preset -------------------------------------------------------------------

/// Ways to write each of `names`, and strings that are none of them.
fn name_inputs(names: &[&str]) -> Vec<String> {
    let mut inputs = Vec::new();
    for name in names {
        let mut mixed: String = name
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        inputs.extend([
            (*name).to_owned(),
            name.to_ascii_uppercase(),
            mixed.clone(),
            format!(" {name}\t\n"),
            format!("{name}s"),
            format!("{name} {name}"),
            name[..name.len() - 1].to_owned(),
            name.replace('-', "_"),
        ]);
        mixed.insert(1, ' ');
        inputs.push(mixed);
    }
    inputs.extend(
        [
            "",
            " ",
            "-",
            "none ",
            "off",
            "default",
            "AWS",
            "ａdaptive",
            "standard\u{a0}",
        ]
        .map(str::to_owned),
    );
    inputs
}

fn check_mode(input: &str) {
    let copy = outcome(|| {
        input
            .parse::<mode::RetryMode>()
            .map(mode::RetryMode::as_str)
    });
    let runtime = outcome(|| {
        input
            .parse::<retry_core::RetryMode>()
            .map(retry_core::RetryMode::as_str)
    });
    assert_same(
        "retry-macros/src/parse/mode.rs",
        "retry-core/src/config/mode.rs",
        input,
        copy,
        runtime,
    );
}

fn check_jitter(input: &str) {
    let copy = outcome(|| input.parse::<jitter::Jitter>().map(jitter::Jitter::as_str));
    let runtime = outcome(|| {
        input
            .parse::<retry_core::backoff::Jitter>()
            .map(retry_core::backoff::Jitter::as_str)
    });
    assert_same(
        "retry-macros/src/parse/jitter.rs",
        "retry-core/src/backoff/jitter.rs",
        input,
        copy,
        runtime,
    );
}

fn check_preset(input: &str) {
    let copy = outcome(|| {
        input
            .parse::<preset::RetryPreset>()
            .map(preset::RetryPreset::as_str)
    });
    let runtime = outcome(|| {
        input
            .parse::<retry_core::RetryPreset>()
            .map(retry_core::RetryPreset::as_str)
    });
    assert_same(
        "retry-macros/src/parse/preset.rs",
        "retry-core/src/config/preset.rs",
        input,
        copy,
        runtime,
    );
}

#[test]
fn modes_parse_the_same() {
    let names = mode::RetryMode::ALL.map(mode::RetryMode::as_str);
    assert_eq!(
        names,
        retry_core::RetryMode::NAMES,
        "the modes of retry-macros/src/parse/mode.rs are not the runtime's: sync it with \
         retry-core/src/config/mode.rs"
    );
    for input in name_inputs(&names) {
        check_mode(&input);
    }
    // The generated code names the runtime's variants.
    for copy in mode::RetryMode::ALL {
        let runtime: retry_core::RetryMode = copy.as_str().parse().expect("a runtime mode");
        assert_eq!(
            copy.variant(),
            format!("{runtime:?}"),
            "retry-macros/src/parse/mode.rs names the variant of {runtime} wrong"
        );
    }
}

#[test]
fn jitters_parse_the_same() {
    let names = jitter::Jitter::ALL.map(jitter::Jitter::as_str);
    assert_eq!(
        names,
        retry_core::backoff::Jitter::NAMES,
        "the jitters of retry-macros/src/parse/jitter.rs are not the runtime's: sync it with \
         retry-core/src/backoff/jitter.rs"
    );
    for input in name_inputs(&names) {
        check_jitter(&input);
    }
    for copy in jitter::Jitter::ALL {
        let runtime: retry_core::backoff::Jitter = copy.as_str().parse().expect("a runtime jitter");
        assert_eq!(
            copy.variant(),
            format!("{runtime:?}"),
            "retry-macros/src/parse/jitter.rs names the variant of {runtime} wrong"
        );
    }
}

#[test]
fn presets_parse_the_same() {
    let names = preset::RetryPreset::ALL.map(preset::RetryPreset::as_str);
    assert_eq!(
        names,
        retry_core::RetryPreset::NAMES,
        "the presets of retry-macros/src/parse/preset.rs are not the runtime's: sync it with \
         retry-core/src/config/preset.rs"
    );
    for input in name_inputs(&names) {
        check_preset(&input);
    }
    for copy in preset::RetryPreset::ALL {
        let runtime: retry_core::RetryPreset = copy.as_str().parse().expect("a runtime preset");
        assert_eq!(
            copy.variant(),
            format!("{runtime:?}"),
            "retry-macros/src/parse/preset.rs names the variant of {runtime} wrong"
        );
    }
}

proptest! {
    #[test]
    fn any_name_parses_the_same(input in any::<String>()) {
        check_mode(&input);
        check_jitter(&input);
        check_preset(&input);
    }

    #[test]
    fn names_in_any_case_and_spacing_parse_the_same(
        name in prop::sample::select(
            [mode::RetryMode::ALL.map(mode::RetryMode::as_str).as_slice(),
             jitter::Jitter::ALL.map(jitter::Jitter::as_str).as_slice(),
             preset::RetryPreset::ALL.map(preset::RetryPreset::as_str).as_slice()].concat()
        ),
        upper in prop::collection::vec(any::<bool>(), 12),
        before in "[ \t\n]{0,2}",
        after in "[ \t\n]{0,2}",
    ) {
        let cased: String = name
            .chars()
            .zip(upper.iter().cycle())
            .map(|(c, &up)| if up { c.to_ascii_uppercase() } else { c })
            .collect();
        let input = format!("{before}{cased}{after}");
        check_mode(&input);
        check_jitter(&input);
        check_preset(&input);
    }
}

// ---- quotas ------------------------------------------------------------------------------

fn check_quota(input: &str) {
    let copy = outcome(|| {
        input
            .parse::<quota::Quota>()
            .map(|quota| format!("{quota:?}"))
    });
    let runtime = outcome(|| {
        input
            .parse::<retry_core::Quota>()
            .map(|quota| format!("{quota:?}"))
    });
    assert_same(
        "retry-macros/src/parse/quota.rs",
        "retry-core/src/config/quota.rs",
        input,
        copy,
        runtime,
    );
}

#[test]
fn quotas_parse_the_same() {
    let mut inputs = name_inputs(&["off", "traffic"]);
    for number in numbers_near_limits(1_000_000_000) {
        inputs.extend(wrappings(&number));
    }
    inputs.extend(
        [
            "1_000",
            "5.0",
            "0x10",
            "1e3",
            "٣",
            "2000 tokens",
            "-0",
            "+0",
            "00",
        ]
        .map(str::to_owned),
    );
    for input in inputs {
        check_quota(&input);
    }
    // The generated code names the runtime's variants the way `Debug` writes them.
    for (copy, runtime) in [
        (quota::Quota::Off, retry_core::Quota::Off),
        (quota::Quota::Traffic, retry_core::Quota::Traffic),
        (quota::Quota::Fixed(7), retry_core::Quota::Fixed(7)),
    ] {
        assert_eq!(format!("{copy:?}"), format!("{runtime:?}"));
    }
}

proptest! {
    #[test]
    fn any_quota_parses_the_same(input in any::<String>()) {
        check_quota(&input);
    }

    #[test]
    fn quota_numbers_of_every_size_parse_the_same(whole in any::<u128>(), digits in 0u32..=39) {
        let whole = 10u128.checked_pow(digits).map_or(whole, |bound| whole % bound);
        check_quota(&whole.to_string());
    }
}

// ---- the presets' backoff ---------------------------------------------------------------

/// What the runtime's preset starts from, in the copy's terms.
fn runtime_backoff(preset: retry_core::RetryPreset) -> defaults::PresetBackoff {
    let config = retry_core::RetryConfig::from_preset(preset)
        .build()
        .expect("a preset is a valid configuration");
    // Whether throttling errors have a base of their own: moving `initial_backoff` moves it
    // too when they have not.
    let probe = Duration::from_nanos(7);
    let probed = retry_core::RetryConfig::from_preset(preset)
        .initial_backoff(probe)
        .build()
        .expect("a shorter initial backoff is valid");
    defaults::PresetBackoff {
        initial: config.initial_backoff(),
        max: config.max_backoff(),
        throttling: (probed.throttling_backoff() != probe).then(|| config.throttling_backoff()),
    }
}

#[test]
fn every_presets_backoff_is_the_runtimes() {
    for copy in preset::RetryPreset::ALL {
        let preset: retry_core::RetryPreset = copy.as_str().parse().expect("a runtime preset");
        let runtime = runtime_backoff(preset);
        let ours = defaults::backoff(copy);
        assert_eq!(
            ours, runtime,
            "the backoff of preset `{preset}` in retry-macros/src/parse/defaults.rs is not the \
             runtime's (retry-core/src/config/defaults.rs, RetryConfig::from_preset): update \
             the copy, or `#[retryable(preset = \"{preset}\")]` checks `initial_backoff <= \
             max_backoff` and caps the throttling backoff against the wrong numbers"
        );
    }
}

// ---- hedge delays ------------------------------------------------------------------------

const HEDGE_COPY: &str = "retry-macros/src/parse/hedge.rs";
const HEDGE_RUNTIME: &str = "retry-core/src/hedge/policy.rs";

fn check_hedge_delay(input: &str) {
    let copy = outcome(|| hedge::parse_hedge_delay(input));
    let runtime = outcome(|| {
        input
            .parse::<retry_core::hedge::HedgeDelay>()
            .map(|delay| match delay {
                retry_core::hedge::HedgeDelay::After(delay) => hedge::HedgeDelay::After(delay),
                retry_core::hedge::HedgeDelay::Percentile(p) => hedge::HedgeDelay::Percentile(p),
            })
    });
    assert_same(HEDGE_COPY, HEDGE_RUNTIME, input, copy, runtime);
}

#[test]
fn hedge_delays_parse_the_same() {
    for input in [
        "50ms",
        " 1.5s ",
        "0ms",
        "0s",
        "50",
        "",
        "p",
        "P95",
        "p95",
        "p99.9",
        "p0.1",
        "p0",
        "p100",
        "p150",
        "p-5",
        "p9 5",
        "p95%",
        "p.5",
        "p5.",
        "p1.2.3",
        "pinf",
        "pNaN",
        "p 95",
        "pp95",
        "-5ms",
        "2 years",
        "p99.99999",
        "p00095",
        "p1e2",
    ] {
        check_hedge_delay(input);
    }
}

#[test]
fn max_hedges_is_the_runtimes() {
    assert_eq!(
        hedge::MAX_HEDGES,
        retry_core::hedge::MAX_HEDGES,
        "sync {HEDGE_COPY} with retry-core/src/hedge/limits.rs"
    );
}

proptest! {
    #[test]
    fn any_hedge_delay_parses_the_same(input in "[pP ]?[0-9.a-z%-]{0,8}") {
        check_hedge_delay(&input);
    }
}
