//! Fleet mode (placeholder doc, written below).

pub mod error;
pub mod keys;
pub mod protocol;
pub mod reconnect;
pub mod redis;
pub mod state_codec;
pub mod store_model;
pub mod store_state;

pub use error::{FleetError, ProtocolError};
