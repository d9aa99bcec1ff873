//! latlab-rt
