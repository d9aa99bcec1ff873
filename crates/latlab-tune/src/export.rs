//! (export: being written.)
