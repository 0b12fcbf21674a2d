//! Every pair of `#[retryable]` arguments: the macro accepts exactly the pairs the documentation
//! allows (each with what the rules require beside it), in either order, and rejects the others
//! with an error that says what to write instead; and `tests/ui/pass/retryable_pairs.rs`, which
//! the suite's one trybuild run compiles and runs, holds every accepted pair, as generated here.
//! Regenerate it with `RETRY_PAIRS=overwrite cargo test -p retry-macros pairs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use proc_macro2::TokenStream;

use super::args::Key;
use super::configure;
use crate::diagnostics::Errors;

/// The pairs the documentation forbids (the first key in [`Key::ALL`]'s order first), and what
/// the error says: `strategy` excludes the arguments that tune the function's own strategy, and
/// `retry_if` is shorthand for a `classifier`.
const FORBIDDEN: [(Key, Key, &str); 12] = [
    (Key::Preset, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::MaxAttempts, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::Mode, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::InitialBackoff, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::MaxBackoff, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::Jitter, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::Timeout, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::MaxWait, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::Quota, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::LongPolling, Key::Strategy, STRATEGY_EXCLUDES),
    (Key::Scope, Key::Strategy, STRATEGY_EXCLUDES),
    (
        Key::Classifier,
        Key::RetryIf,
        "`classifier` and `retry_if` cannot be combined: `retry_if = f` is shorthand for \
         `classifier = RetryIf::new(f)`; keep one of them",
    ),
];

const STRATEGY_EXCLUDES: &str = "cannot be combined with `strategy = ...`: the strategy carries \
                                 its own configuration; configure it where it is built";

/// Where the generated pass test lives, from this crate's directory.
const PASS_FILE: &str = "../tests/ui/pass/retryable_pairs.rs";

/// The arguments of the pair `keys`, each as its documented example ([`Key::example`]), then
/// what the rules require beside them: `max_hedges` needs `hedge_after`, `shed = true` and
/// `max_wait` need `mode = "adaptive"`, and `shed = true` a `timeout` or a `max_wait` (none of
/// it with a given `strategy`, which is configured at run time).
fn arguments(keys: &[Key]) -> Vec<&'static str> {
    let has = |key| keys.contains(&key);
    let mut written: Vec<&'static str> = keys.iter().map(|key| key.example()).collect();
    if has(Key::MaxHedges) && !has(Key::HedgeAfter) {
        written.push(Key::HedgeAfter.example());
    }
    if !has(Key::Strategy) {
        if (has(Key::Shed) || has(Key::MaxWait)) && !has(Key::Mode) {
            written.push(Key::Mode.example());
        }
        if has(Key::Shed) && !has(Key::Timeout) && !has(Key::MaxWait) {
            written.push(Key::Timeout.example());
        }
    }
    written
}

/// The errors the macro reports for `arguments`, empty when it accepts them.
fn verdict(arguments: &[&str]) -> Vec<String> {
    let tokens: TokenStream = arguments.join(", ").parse().expect("valid tokens");
    let mut errors = Errors::default();
    let config = configure(tokens, &mut errors);
    let messages = errors.messages();
    assert_eq!(config.is_some(), messages.is_empty(), "{arguments:?}");
    messages
}

/// Every pair of distinct keys, in [`Key::ALL`]'s order.
fn pairs() -> impl Iterator<Item = (Key, Key)> {
    Key::ALL.into_iter().enumerate().flat_map(|(index, first)| {
        Key::ALL[index + 1..]
            .iter()
            .map(move |&second| (first, second))
    })
}

/// What the documentation says of a pair: `Some(error)` when it is forbidden.
fn forbidden(first: Key, second: Key) -> Option<&'static str> {
    FORBIDDEN
        .iter()
        .find(|&&(a, b, _)| (a, b) == (first, second))
        .map(|&(_, _, error)| error)
}

#[test]
fn the_forbidden_pairs_are_written_in_order_and_once() {
    let order = |key| Key::ALL.iter().position(|&k| k == key);
    for (index, &(first, second, _)) in FORBIDDEN.iter().enumerate() {
        assert!(order(first) < order(second), "{first:?}, {second:?}");
        assert!(
            !FORBIDDEN[..index]
                .iter()
                .any(|&(a, b, _)| (a, b) == (first, second)),
            "{first:?}, {second:?} twice"
        );
    }
}

#[test]
fn every_pair_is_accepted_or_rejected_as_documented_in_either_order() {
    for (first, second) in pairs() {
        for keys in [[first, second], [second, first]] {
            let arguments = arguments(&keys);
            let errors = verdict(&arguments);
            match forbidden(first, second) {
                None => assert!(errors.is_empty(), "{arguments:?}: {errors:?}"),
                Some(expected) => {
                    assert_eq!(errors.len(), 1, "{arguments:?}: {errors:?}");
                    assert!(errors[0].contains(expected), "{arguments:?}: {errors:?}");
                }
            }
        }
    }
}

#[test]
fn every_argument_alone_is_accepted_with_what_the_rules_require() {
    for key in Key::ALL {
        let arguments = arguments(&[key]);
        assert_eq!(verdict(&arguments), Vec::<String>::new(), "{arguments:?}");
    }
}

#[test]
fn the_rules_requirements_are_errors_that_say_what_to_write() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["shed = true"],
            "`shed = true` needs `mode = \"adaptive\"` (standard mode never sheds a call); or \
             remove `shed`",
        ),
        (
            &["shed = true", "mode = \"adaptive\""],
            "`shed = true` needs a limit to shed on: a deadline, e.g. `timeout = \"2s\"`, or a \
             bound on the wait, e.g. `max_wait = \"500ms\"`",
        ),
        (
            &["max_wait = \"500ms\""],
            "`max_wait` bounds the wait for adaptive mode's send permit, and standard mode never \
             waits for one: add `mode = \"adaptive\"`, or remove `max_wait`",
        ),
        (
            &["max_wait = \"500ms\"", "mode = \"standard\""],
            "add `mode = \"adaptive\"`, or remove `max_wait`",
        ),
    ];
    for (arguments, expected) in cases {
        let errors = verdict(arguments);
        assert_eq!(errors.len(), 1, "{arguments:?}: {errors:?}");
        assert!(errors[0].contains(expected), "{arguments:?}: {errors:?}");
    }
    // Satisfied: by adaptive mode with either limit, or by a given strategy.
    for arguments in [
        &["shed = true", "mode = \"adaptive\"", "max_wait = \"500ms\""][..],
        &["shed = true", "mode = \"adaptive\"", "timeout = \"30s\""],
        &["shed = true", "strategy = self.strategy"],
        &["max_wait = \"500ms\"", "mode = \" Adaptive \""],
    ] {
        assert_eq!(verdict(arguments), Vec::<String>::new(), "{arguments:?}");
    }
}

/// The name of the pair's generated function.
fn function_name(first: Key, second: Key) -> String {
    format!("{}_and_{}", first.name(), second.name())
}

/// The pass test: every accepted pair on an async method and, unless it has an argument that
/// needs an `async fn` ([`Key::ASYNC_ONLY`]), on a blocking one; `main` calls each once.
fn generated() -> String {
    let accepted: Vec<(Key, Key)> = pairs()
        .filter(|&(first, second)| forbidden(first, second).is_none())
        .collect();
    let mut methods = String::new();
    let mut calls = String::new();
    for &(first, second) in &accepted {
        let name = function_name(first, second);
        let attribute = arguments(&[first, second]).join(", ");
        write!(
            methods,
            "\n    #[retryable({attribute})]\n    \
             pub async fn {name}(&self) -> Result<u32, PairError> {{\n        Ok(1)\n    }}\n"
        )
        .expect("a String");
        writeln!(
            calls,
            "    assert_eq!(client.{name}().await.ok(), Some(1));"
        )
        .expect("a String");
        if [first, second]
            .iter()
            .all(|key| !Key::ASYNC_ONLY.contains(key))
        {
            write!(
                methods,
                "\n    #[retryable({attribute})]\n    \
                 pub fn {name}_blocking(&self) -> Result<u32, PairError> {{\n        Ok(1)\n    \
                 }}\n"
            )
            .expect("a String");
            writeln!(
                calls,
                "    assert_eq!(client.{name}_blocking().ok(), Some(1));"
            )
            .expect("a String");
        }
    }
    format!(
        "{PREAMBLE}\nimpl Client {{{methods}}}\n\n\
         #[tokio::main(flavor = \"current_thread\", start_paused = true)]\n\
         async fn main() {{\n    let client = Client::new();\n{calls}}}\n"
    )
}

/// What every generated method needs: an error type that can hold a shed call and a cut
/// attempt, and the names the arguments' examples use.
const PREAMBLE: &str = r#"//! Every pair of `#[retryable]` arguments the documentation allows, each argument written as
//! its example in the macro's messages, with what the rules require beside it (`max_hedges`
//! needs `hedge_after`, `shed = true` and `max_wait` need `mode = "adaptive"`, `shed = true` a
//! `timeout` or a `max_wait`): on an async method and, but for `attempt_timeout`, `hedge_after`
//! and `max_hedges` (an `async fn`'s), on a blocking one; `main` calls each once.
//!
//! Generated by `retry-macros/src/retryable/pairs.rs`, which checks that the macro rejects the
//! other pairs: do not edit, regenerate with `RETRY_PAIRS=overwrite cargo test -p retry-macros
//! pairs`.
#![deny(warnings)]

use retry_core::classify::RetryInfoClassifier as MyClassifier;
use retry_core::{AdaptiveStrategy, LoadShed, RetryConfig, RetryEvent, RetryInfo, retryable};

#[derive(Debug)]
pub enum PairError {
    Shed(LoadShed),
    TimedOut,
}

impl RetryInfo for PairError {}

impl From<LoadShed> for PairError {
    fn from(shed: LoadShed) -> Self {
        PairError::Shed(shed)
    }
}

impl From<tokio::time::error::Elapsed> for PairError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        PairError::TimedOut
    }
}

pub fn is_retryable(error: &PairError) -> bool {
    matches!(error, PairError::TimedOut)
}

pub fn log_retry(event: &RetryEvent<'_, PairError>) {
    let _ = event.attempt();
}

pub struct Client {
    strategy: AdaptiveStrategy,
}

impl Client {
    fn new() -> Self {
        Client {
            strategy: AdaptiveStrategy::new(RetryConfig::default()),
        }
    }
}
"#;

/// The pass test's path.
fn pass_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(PASS_FILE)
}

#[test]
fn the_pass_test_holds_every_accepted_pair() {
    let expected = generated();
    let path = pass_file();
    if std::env::var_os("RETRY_PAIRS").is_some_and(|value| value == "overwrite") {
        std::fs::write(&path, &expected).expect("the pass test written");
        return;
    }
    let found = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        found == expected,
        "{} is not what the rules accept: regenerate it with `RETRY_PAIRS=overwrite cargo test \
         -p retry-macros pairs`",
        path.display()
    );
}
