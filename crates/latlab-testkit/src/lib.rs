//! Helpers shared by latlab's tests; a dev-dependency only, never published.
//!
//! - [`skip`]: the skip-or-fail rule for tests that need a privilege or a
//!   tool: a test skips with the reason and the fix, unless
//!   `LATLAB_REQUIRE_PRIVILEGE=1` (set in CI) turns the skip into a failure,
//!   so a green CI proves every such test ran;
//! - [`tracing`]: tracefs found the way the product finds it
//!   (`/sys/kernel/tracing`, or debugfs's `tracing/`), and the checks that a
//!   test left nothing enabled in it;
//! - [`process`]: watching and cleaning up the processes a test starts;
//! - [`others`]: a binary another user (`nobody`) can execute, also when
//!   the clone is in a private directory such as `/root`;
//! - [`pg_server`]: a private PostgreSQL server started by the test itself
//!   ([`PgServer`]).
#![warn(missing_docs)]

pub mod others;
pub mod pg_server;
pub mod process;
pub mod skip;
pub mod tracing;

pub use others::ExecutableByOthers;
pub use pg_server::PgServer;
pub use skip::{have_tool, require, require_privilege, root};
pub use tracing::{require_tracefs, TracefsState};
