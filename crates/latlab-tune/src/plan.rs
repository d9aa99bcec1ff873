//! (plan: being written.)
