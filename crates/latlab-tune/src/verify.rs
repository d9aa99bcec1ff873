//! (verify: being written.)
