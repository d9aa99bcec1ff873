//! (bootline: being written.)
