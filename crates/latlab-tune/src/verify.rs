//! (verify: being written.) Side-by-side verification of a fix.

use serde::{Deserialize, Serialize};

/// The measured effect of a fix (being written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Effect {}
