//! The guide: recipes and the longer explanations, one page per topic. These modules hold
//! documentation only; every example on a page is a doc test.
//!
//! * [`defaults`]: what a bare `#[retryable]` does, why it departs from the AWS SDKs' defaults,
//!   the presets that keep theirs, and how to size or switch off the retry quota (long polling,
//!   the environment).
//! * [`adaptive`]: adaptive mode's client-side rate limiter, and where it departs from the AWS
//!   SDKs' adaptive retry.
//! * [`load_shedding`]: refusing a call that could only be sent after its deadline.
//! * [`hedging`]: a second copy of a slow idempotent request, charged like a retry.
//! * [`blocking`]: `#[retryable]` on a plain `fn`, and blocking retries in tests.
//! * [`layers`]: retrying at one layer only, and `#[tracing::instrument]` beside `#[retryable]`.
//! * [`dyn_errors`]: `anyhow::Error`, `Box<dyn Error>` and foreign error types.
//! * [`testing`]: tests in virtual time, reproducible jitter, scopes shared between tests.
//! * [`spans`]: seeing the retries' spans and events under `tracing-subscriber`.
//! * `prometheus` (feature `metrics`): the metrics in Prometheus, named by its conventions, with
//!   histogram buckets.
//! * The integrations, each behind its feature: `reqwest`, `tower` and `tonic`.
//!
//! Measured figures (the storm simulator's, the benchmarks') are kept with the commands that
//! produce them in the repository: `docs/sim/` and `BENCHMARKS.md`.

#[doc = include_str!("defaults.md")]
pub mod defaults {}

#[doc = include_str!("adaptive.md")]
pub mod adaptive {}

#[doc = include_str!("load_shedding.md")]
pub mod load_shedding {}

#[doc = include_str!("hedging.md")]
pub mod hedging {}

#[doc = include_str!("blocking.md")]
pub mod blocking {}

#[doc = include_str!("layers.md")]
pub mod layers {}

#[doc = include_str!("dyn_errors.md")]
pub mod dyn_errors {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("spans.md")]
pub mod spans {}

#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
#[doc = include_str!("prometheus.md")]
pub mod prometheus {}

#[cfg(feature = "reqwest")]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
#[doc = include_str!("reqwest.md")]
pub mod reqwest {}

#[cfg(all(feature = "tower", feature = "http"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "tower", feature = "http"))))]
#[doc = include_str!("tower.md")]
pub mod tower {}

#[cfg(all(feature = "tonic", feature = "tower"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "tonic", feature = "tower"))))]
#[doc = include_str!("tonic.md")]
pub mod tonic {}
