//! Each command's arguments resolved and validated into the configuration
//! its library crates take: a library never sees a half-checked option.

pub mod explain;
pub mod load;
pub mod lockbench;
pub mod record;
pub mod respond;
pub mod run;
pub mod watch;
