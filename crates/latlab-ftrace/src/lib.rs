//! Pure decoders for Linux ftrace data.
pub mod endian;
pub mod error;
pub mod format;
pub mod page;
pub(crate) mod printf;
pub mod printfmt;
pub mod symbols;
pub use endian::Endian;
pub use error::{Error, Result};
