//! latlab-measure
