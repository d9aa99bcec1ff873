//! latlab-fleet: a lab of boards around one store.
//!
//! - The board's side: [`spool`] keeps every result in a local directory
//!   until a server has it, and [`push`] sends what waits there to
//!   `latlab serve` (`POST /api/v1/results` with the board's token).
//! - The server (`latlab serve`, the `serve` feature): [`server`] takes
//!   the boards' results over HTTP into the store (latlab-history, SQLite
//!   or PostgreSQL) and serves the dashboard; it keeps no state beyond the
//!   store.
//! - The dashboard's model: [`dashboard`] sets the stored results against
//!   each other per series (baselines, regressions, trends) into the typed
//!   views latlab-report's dashboard renders.
//!
//! A board binary is built without the `serve` feature: it pushes, it
//! never serves, and carries neither tokio nor axum.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let doc = serde_json::json!({"schema": "latlab.run", "id": "r-1"});
//! let path = latlab_fleet::spool::spool(dir.path(), &doc).unwrap();
//! assert_eq!(path.file_name().unwrap(), "r-1.json");
//! assert_eq!(latlab_fleet::spool::spooled(dir.path()).unwrap(), [path]);
//! ```

#![warn(missing_docs)]

pub mod dashboard;
mod error;
mod http_client;
pub mod push;
#[cfg(feature = "serve")]
pub mod server;
pub mod spool;

pub use error::{FleetError, Result};
