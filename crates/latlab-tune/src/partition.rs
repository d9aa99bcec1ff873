//! (partition: being written.)
