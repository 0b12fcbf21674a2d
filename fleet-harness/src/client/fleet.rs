//! Fleet mode's side of a client: attaching the scope to the fleet on the harness's
//! `redis-server` before the first call, and reading the lease's state for the reports.

use retry_core::RetryConfig;
use retry_core::strategy::ConfiguredStrategy;

use super::ClientOptions;
use crate::phase_spec::Mode;
use crate::wire::LeaseState;

/// The process's attachment to the fleet.
#[derive(Debug)]
pub enum FleetLink {}

/// Attaches the scope in fleet mode (`None` in local mode).
pub async fn join(
    options: &ClientOptions,
    _config: &RetryConfig,
) -> Result<Option<FleetLink>, String> {
    match options.mode {
        Mode::Local => Ok(None),
        Mode::Fleet => Err(
            "fleet mode needs retry_core::fleet's attach API, which this build does not have yet"
                .to_owned(),
        ),
    }
}

impl FleetLink {
    /// The lease's state now.
    pub fn lease_state(&self, _strategy: &ConfiguredStrategy) -> LeaseState {
        match *self {}
    }
}
