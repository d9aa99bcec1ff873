//! The axes of a plot: how a value maps to a position, and the ticks.

use crate::units::short_number;

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Proportional.
    Linear,
    /// Logarithmic (values at or below zero sit on the axis minimum).
    Log,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A number with k/M/G suffixes: `1`, `250`, `10k`, `1M`.
    Number,
    /// A share written as a percentage: `100%`, `0.1%`, `0.001%`.
    Percent,
}

/// One axis.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Smallest value shown.
    pub min: f64,
    /// Largest value shown.
    pub max: f64,
    /// Linear or log.
    pub scale: Scale,
    /// Axis title.
    pub label: String,
    /// Tick label format.
    pub format: Format,
}

impl Axis {
    /// A linear axis over `min..=max` (widened if empty).
    pub fn linear(min: f64, max: f64, label: &str) -> Axis {
        let max = if max > min { max } else { min + 1.0 };
        Axis {
            min,
            max,
            scale: Scale::Linear,
            label: label.into(),
            format: Format::Number,
        }
    }

    /// A log axis from the decade at or below `min` to the decade at or above `max`.
    pub fn log(min: f64, max: f64, label: &str) -> Axis {
        let min = if min > 0.0 { min } else { 1.0 };
        let max = if max > min { max } else { min * 10.0 };
        Axis {
            min: 10f64.powf(min.log10().floor()),
            max: 10f64.powf(max.log10().ceil()),
            scale: Scale::Log,
            label: label.into(),
            format: Format::Number,
        }
    }

    /// The same axis with another tick format.
    pub fn with_format(mut self, format: Format) -> Axis {
        self.format = format;
        self
    }

    /// Position of `value` along the axis, 0..=1 (clamped).
    pub fn fraction(&self, value: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear => (value - self.min) / (self.max - self.min),
            Scale::Log => {
                if value <= 0.0 {
                    0.0
                } else {
                    (value.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
                }
            }
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Tick positions and labels.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let values: Vec<f64> = match self.scale {
            Scale::Linear => {
                let step = nice_step((self.max - self.min) / 5.0);
                let mut v = (self.min / step).ceil() * step;
                let mut out = Vec::new();
                while v <= self.max + step * 1e-9 && out.len() < 50 {
                    out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                    v += step;
                }
                out
            }
            Scale::Log => {
                let first = self.min.log10().round() as i32;
                let last = self.max.log10().round() as i32;
                let decades = last - first;
                let mantissas: &[f64] = if decades <= 2 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let every = (decades / 8 + 1).max(1);
                let mut out = Vec::new();
                for e in first..=last {
                    if (e - first) % every != 0 {
                        continue;
                    }
                    for m in mantissas {
                        let v = m * 10f64.powi(e);
                        if v >= self.min * 0.999 && v <= self.max * 1.001 {
                            out.push(v);
                        }
                    }
                }
                out
            }
        };
        values
            .into_iter()
            .map(|v| (v, format_tick(v, self.format)))
            .collect()
    }
}

/// A step of 1, 2 or 5 times a power of ten near `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let m = raw / magnitude;
    let nice = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

fn format_tick(v: f64, format: Format) -> String {
    match format {
        Format::Percent => format!("{}%", short_number(v * 100.0)),
        Format::Number => {
            let a = v.abs();
            if a >= 1e9 {
                format!("{}G", short_number(v / 1e9))
            } else if a >= 1e6 {
                format!("{}M", short_number(v / 1e6))
            } else if a >= 1e4 {
                format!("{}k", short_number(v / 1e3))
            } else {
                short_number(v)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_spans_whole_decades_and_ticks_each() {
        let axis = Axis::log(3.2, 4_100.0, "us");
        assert_eq!((axis.min, axis.max), (1.0, 10_000.0));
        let labels: Vec<String> = axis.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10k"]);
        assert!((axis.fraction(100.0) - 0.5).abs() < 1e-12);
        assert_eq!(axis.fraction(0.0), 0.0);
    }

    #[test]
    fn linear_ticks_are_round_numbers() {
        let axis = Axis::linear(-60.0, 60.0, "us");
        let labels: Vec<String> = axis.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["-60", "-40", "-20", "0", "20", "40", "60"]);
        let share = Axis::log(1e-4, 1.0, "share").with_format(Format::Percent);
        let labels: Vec<String> = share.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.01%", "0.1%", "1%", "10%", "100%"]);
    }
}
