//! Pure decoders for Linux ftrace data.
pub mod dat;
pub mod endian;
pub mod error;
pub mod format;
pub mod page;
pub(crate) mod printf;
pub mod printfmt;
pub mod render;
pub mod stream;
pub mod symbols;
pub mod text;
pub use dat::{DatFile, Meta};
pub use endian::Endian;
pub use error::{Error, Result};
pub use stream::{Event, Events};
