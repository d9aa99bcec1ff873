//! What the commands print on the terminal: live views while they run,
//! summaries after.

pub mod record;
pub mod respond;
pub mod run;
pub mod status;
pub mod watch;
