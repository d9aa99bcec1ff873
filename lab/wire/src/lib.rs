//! The lab's GPIO pair (`lab/run`): a Silicon Labs CP2112 (a USB HID
//! GPIO and SMBus bridge) emulated in user space over `/dev/uhid`, so the
//! kernel's own `hid-cp2112` driver creates a GPIO chip for it, and a wire
//! inside the emulated chip that copies one output pin to one input pin.
//!
//! Debian's kernels have neither `gpio-sim` nor `gpio-mockup`, and QEMU's
//! machines wire no GPIO output back to an input, but every one of them
//! has `uhid` and `hid-cp2112`. What `latlab respond --gpio OUT,IN` meets
//! is then the real path of a USB GPIO adapter: gpiolib's character
//! device, the `hid-cp2112` driver (each pin change is a HID feature
//! report to the chip) and its edge detection, which polls the pins every
//! 10 jiffies (40 ms at HZ=250) and raises the edge interrupt, timestamped
//! by gpiolib, when it sees the input change. That poll, not the wire, is
//! what dominates the measured round trip; [`Chip`] counts both.
//!
//! - [`uhid`]: the `/dev/uhid` events this program reads and writes;
//! - [`Chip`]: the CP2112's reports, its pins and the wire;
//! - [`Stats`]: what the wire saw (the delay from the output's change to
//!   the driver's poll that reported it, the poll interval).

#![warn(missing_docs)]

pub mod uhid;

/// USB vendor id of Silicon Labs (the driver matches it).
pub const VENDOR: u32 = 0x10c4;
/// USB product id of the CP2112.
pub const PRODUCT: u32 = 0xea90;

/// CP2112 report ids (AN495), the ones the Linux driver uses for GPIO
/// and probing.
pub mod report {
    /// Pin direction, drive mode, special functions (feature, 4 bytes).
    pub const GPIO_CONFIG: u8 = 0x02;
    /// Pin levels (feature, 1 byte).
    pub const GPIO_GET: u8 = 0x03;
    /// Set output latches: values, mask (feature, 2 bytes).
    pub const GPIO_SET: u8 = 0x04;
    /// Part number and version (feature, 2 bytes).
    pub const VERSION: u8 = 0x05;
    /// SMBus configuration (feature, 13 bytes).
    pub const SMBUS_CONFIG: u8 = 0x06;
    /// Which PROM fields are still programmable (feature, 1 byte).
    pub const LOCK_BYTE: u8 = 0x20;
    /// USB configuration in the PROM (feature, 9 bytes).
    pub const USB_CONFIG: u8 = 0x21;
    /// Manufacturer string (feature).
    pub const MANUFACTURER: u8 = 0x22;
    /// Product string (feature).
    pub const PRODUCT: u8 = 0x23;
    /// Serial number string (feature).
    pub const SERIAL: u8 = 0x24;
}

/// Feature reports the descriptor declares: id and payload bytes (after the id).
const FEATURES: [(u8, u8); 10] = [
    (report::GPIO_CONFIG, 4),
    (report::GPIO_GET, 1),
    (report::GPIO_SET, 2),
    (report::VERSION, 2),
    (report::SMBUS_CONFIG, 13),
    (report::LOCK_BYTE, 1),
    (report::USB_CONFIG, 9),
    (report::MANUFACTURER, 62),
    (report::PRODUCT, 62),
    (report::SERIAL, 62),
];

/// The HID report descriptor: one vendor-defined collection with the
/// feature reports above (the driver talks raw reports; the descriptor
/// only has to parse).
pub fn report_descriptor() -> Vec<u8> {
    let mut d = vec![
        0x06, 0x00, 0xff, // Usage Page (vendor 0xff00)
        0x09, 0x01, // Usage (1)
        0xa1, 0x01, // Collection (Application)
        0x15, 0x00, // Logical Minimum (0)
        0x26, 0xff, 0x00, // Logical Maximum (255)
        0x75, 0x08, // Report Size (8)
    ];
    for (id, len) in FEATURES {
        d.extend_from_slice(&[0x85, id, 0x95, len, 0x09, 0x01, 0xb1, 0x02]);
    }
    d.push(0xc0); // End Collection
    d
}

/// Running figures of one delay, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Samples.
    pub count: u64,
    /// Smallest, ns.
    pub min: u64,
    /// Largest, ns.
    pub max: u64,
    /// Sum, ns.
    pub sum: u64,
}

impl Stats {
    /// Adds one sample.
    pub fn record(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min {
            self.min = ns;
        }
        self.max = self.max.max(ns);
        self.sum = self.sum.saturating_add(ns);
        self.count += 1;
    }

    /// The mean, ns (0 without samples).
    pub fn mean(&self) -> u64 {
        self.sum.checked_div(self.count).unwrap_or(0)
    }

    /// `N samples, min/mean/max X/Y/Z us`.
    pub fn describe(&self) -> String {
        if self.count == 0 {
            return "no samples".into();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        format!(
            "{} samples, min/mean/max {:.0}/{:.0}/{:.0} us",
            self.count,
            us(self.min),
            us(self.mean()),
            us(self.max)
        )
    }
}

/// Why a report was refused (the driver sees an I/O error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A report id this chip does not have.
    UnknownReport(u8),
    /// A report shorter than its fields.
    TooShort(u8),
}

/// The emulated CP2112: eight pins and the wire from `out` to `input`.
#[derive(Debug, Clone)]
pub struct Chip {
    /// Pins configured as outputs (bit set).
    pub direction: u8,
    /// Output latches.
    pub latch: u8,
    /// Levels driven from outside onto the pins (the wire drives `input`).
    pub external: u8,
    push_pull: u8,
    special: u8,
    clock_divider: u8,
    smbus: [u8; 13],
    out: u8,
    input: u8,
    /// When the wire last changed `input` and nobody has read it since, ns.
    changed_at: Option<u64>,
    last_poll: Option<u64>,
    /// The input level the last pin read returned.
    last_read: Option<bool>,
    /// The last read showed the input changed: the next read is the edge's
    /// direction read, not a poll.
    edge_read_due: bool,
    /// Output change to the first pin read that shows it on the input.
    pub seen: Stats,
    /// Interval between two of the driver's edge polls (pin reads other
    /// than the one gpiolib makes right after an edge to tell its direction).
    pub poll: Stats,
    /// Pin reads gpiolib made after an edge to tell rising from falling.
    pub direction_reads: u64,
    /// Output changes copied to the input.
    pub copies: u64,
}

impl Chip {
    /// A chip whose pin `out` is wired to pin `input` (0..=7, different).
    pub fn new(out: u8, input: u8) -> Result<Chip, String> {
        if out > 7 || input > 7 || out == input {
            return Err(format!(
                "the CP2112 has pins 0..7: give two different ones (got {out} and {input})"
            ));
        }
        Ok(Chip {
            // All inputs, open drain, latches low (no glitch when the
            // driver makes a pin an output before setting its value).
            direction: 0,
            latch: 0,
            external: 0,
            push_pull: 0,
            special: 0,
            clock_divider: 0,
            smbus: [0x00, 0x01, 0x86, 0xa0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0],
            out,
            input,
            changed_at: None,
            last_poll: None,
            last_read: None,
            edge_read_due: false,
            seen: Stats::default(),
            poll: Stats::default(),
            direction_reads: 0,
            copies: 0,
        })
    }

    /// The levels a GPIO read returns: outputs read their latch, inputs
    /// what drives them.
    pub fn levels(&self) -> u8 {
        (self.latch & self.direction) | (self.external & !self.direction)
    }

    /// The wire: while `out` is an output, `input` follows its latch.
    fn propagate(&mut self, now_ns: u64) {
        let (out, input) = (1u8 << self.out, 1u8 << self.input);
        if self.direction & out == 0 {
            return;
        }
        let level = self.latch & out != 0;
        if (self.external & input != 0) != level {
            if level {
                self.external |= input;
            } else {
                self.external &= !input;
            }
            self.copies += 1;
            // An input pin only shows a change when it is an input.
            if self.direction & input == 0 {
                self.changed_at = Some(now_ns);
            }
        }
    }

    /// Answers a GET_REPORT for `id`: the report, its id first.
    pub fn get_report(&mut self, id: u8, now_ns: u64) -> Result<Vec<u8>, Refused> {
        Ok(match id {
            report::GPIO_CONFIG => vec![
                id,
                self.direction,
                self.push_pull,
                self.special,
                self.clock_divider,
            ],
            report::GPIO_GET => {
                // hid-cp2112 polls the pins; when a poll finds an edge on a
                // line watched for both edges, gpiolib reads the pin once
                // more, at once, to tell rising from falling.
                if self.edge_read_due {
                    self.edge_read_due = false;
                    self.direction_reads += 1;
                } else {
                    if let Some(last) = self.last_poll {
                        self.poll.record(now_ns.saturating_sub(last));
                    }
                    self.last_poll = Some(now_ns);
                }
                if let Some(at) = self.changed_at.take() {
                    self.seen.record(now_ns.saturating_sub(at));
                }
                let levels = self.levels();
                let input = levels & (1 << self.input) != 0;
                if self.last_read.is_some_and(|last| last != input) {
                    self.edge_read_due = true;
                }
                self.last_read = Some(input);
                vec![id, levels]
            }
            report::VERSION => vec![id, 0x0c, 0x03],
            report::SMBUS_CONFIG => {
                let mut r = vec![id];
                r.extend_from_slice(&self.smbus);
                r
            }
            // All PROM fields programmed already (read-only).
            report::LOCK_BYTE => vec![id, 0x00],
            report::USB_CONFIG => {
                let mut r = vec![id];
                r.extend_from_slice(&(VENDOR as u16).to_le_bytes());
                r.extend_from_slice(&(PRODUCT as u16).to_le_bytes());
                r.extend_from_slice(&[50, 0, 1, 0, 0]);
                r
            }
            report::MANUFACTURER | report::PRODUCT | report::SERIAL => {
                let text = match id {
                    report::MANUFACTURER => "latlab",
                    report::PRODUCT => "lab wire (emulated CP2112)",
                    _ => "0001",
                };
                let utf16: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
                let mut r = vec![id, (utf16.len() + 2) as u8, 0x03];
                r.extend_from_slice(&utf16);
                r
            }
            _ => return Err(Refused::UnknownReport(id)),
        })
    }

    /// Takes a SET_REPORT (`data` starts with the report id).
    pub fn set_report(&mut self, data: &[u8], now_ns: u64) -> Result<(), Refused> {
        let id = *data.first().ok_or(Refused::TooShort(0))?;
        let need = |n: usize| {
            if data.len() < n {
                Err(Refused::TooShort(id))
            } else {
                Ok(())
            }
        };
        match id {
            report::GPIO_CONFIG => {
                need(3)?;
                self.direction = data[1];
                self.push_pull = data[2];
                if let Some(&s) = data.get(3) {
                    self.special = s;
                }
                if let Some(&c) = data.get(4) {
                    self.clock_divider = c;
                }
            }
            report::GPIO_SET => {
                need(3)?;
                let (values, mask) = (data[1], data[2]);
                self.latch = (self.latch & !mask) | (values & mask);
            }
            report::SMBUS_CONFIG => {
                need(14)?;
                self.smbus.copy_from_slice(&data[1..14]);
            }
            // PROM writes: accepted and ignored, as a locked part does.
            report::USB_CONFIG | report::MANUFACTURER | report::PRODUCT | report::SERIAL => {}
            _ => return Err(Refused::UnknownReport(id)),
        }
        self.propagate(now_ns);
        Ok(())
    }

    /// One line on what the wire saw.
    pub fn summary(&self) -> String {
        format!(
            "lab-wire: {} output changes copied to the input; output change -> the driver's \
             next pin read: {}; the driver's edge poll every: {}; edge direction reads: {}",
            self.copies,
            self.seen.describe(),
            self.poll.describe(),
            self.direction_reads
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the driver does for `--gpio 0,1`: pin 0 an output driven low,
    /// pin 1 an input watched for edges, then the responder's toggles.
    #[test]
    fn the_output_pin_drives_the_input_pin_and_the_poll_sees_it() {
        let mut chip = Chip::new(0, 1).unwrap();
        // direction_output(0, 0): read config, set the direction bit, then the value.
        let mut config = chip.get_report(report::GPIO_CONFIG, 0).unwrap();
        assert_eq!(config.len(), 5, "the driver wants 5 bytes");
        config[1] |= 1;
        chip.set_report(&config, 10).unwrap();
        chip.set_report(&[report::GPIO_SET, 0x00, 0x01], 20)
            .unwrap();
        // Pin 1 stays an input (direction_input from the irq start-up).
        assert_eq!(chip.get_report(report::GPIO_GET, 100).unwrap(), [0x03, 0]);
        // The responder raises pin 0: pin 1 follows, the next poll sees it.
        chip.set_report(&[report::GPIO_SET, 0xff, 0x01], 1_000)
            .unwrap();
        assert_eq!(
            chip.get_report(report::GPIO_GET, 41_000).unwrap(),
            [0x03, 0b11]
        );
        assert_eq!(chip.seen.count, 1);
        assert_eq!(chip.seen.min, 40_000);
        assert_eq!(chip.poll.min, 40_900);
        // gpiolib's direction read right after the edge: no poll.
        assert_eq!(chip.get_report(report::GPIO_GET, 41_100).unwrap(), [3, 3]);
        assert_eq!((chip.poll.count, chip.direction_reads), (1, 1));
        // ... and lowers it again.
        chip.set_report(&[report::GPIO_SET, 0x00, 0x01], 50_000)
            .unwrap();
        assert_eq!(chip.get_report(report::GPIO_GET, 81_000).unwrap(), [3, 0]);
        assert_eq!((chip.copies, chip.seen.count), (2, 2));
        assert_eq!(chip.poll.min, 81_000 - 41_000);
        chip.get_report(report::GPIO_GET, 81_200).unwrap();
        // A poll with no change records no delay.
        chip.get_report(report::GPIO_GET, 121_000).unwrap();
        assert_eq!(chip.seen.count, 2);
        assert_eq!((chip.poll.count, chip.direction_reads), (3, 2));
    }

    #[test]
    fn an_undriven_output_pin_moves_nothing() {
        let mut chip = Chip::new(2, 5).unwrap();
        // Pin 2 still an input: setting its latch drives no wire.
        chip.set_report(&[report::GPIO_SET, 0xff, 0x04], 0).unwrap();
        assert_eq!(chip.copies, 0);
        assert_eq!(chip.levels() & (1 << 5), 0);
        // Once an output, the latched high goes through.
        chip.set_report(&[report::GPIO_CONFIG, 0x04, 0xff, 0, 0], 5)
            .unwrap();
        assert_eq!(chip.copies, 1);
        assert_ne!(chip.levels() & (1 << 5), 0);
    }

    #[test]
    fn probe_reports_have_the_lengths_the_driver_checks() {
        let mut chip = Chip::new(0, 1).unwrap();
        assert_eq!(chip.get_report(report::VERSION, 0).unwrap().len(), 3);
        let smbus = chip.get_report(report::SMBUS_CONFIG, 0).unwrap();
        assert_eq!(smbus.len(), 14);
        chip.set_report(&smbus, 0).unwrap();
        assert_eq!(chip.get_report(report::LOCK_BYTE, 0).unwrap().len(), 2);
        assert_eq!(chip.get_report(report::GPIO_GET, 0).unwrap().len(), 2);
        let product = chip.get_report(report::PRODUCT, 0).unwrap();
        assert_eq!(product[1] as usize, product.len() - 1, "length byte");
        assert_eq!(chip.get_report(0x42, 0), Err(Refused::UnknownReport(0x42)));
        assert_eq!(
            chip.set_report(&[report::GPIO_SET, 1], 0),
            Err(Refused::TooShort(report::GPIO_SET))
        );
    }

    #[test]
    fn bad_pins_are_refused() {
        assert!(Chip::new(1, 1).is_err());
        assert!(Chip::new(0, 8).unwrap_err().contains("0..7"));
    }

    #[test]
    fn the_descriptor_declares_every_report_the_chip_answers() {
        let d = report_descriptor();
        assert_eq!((d[0], *d.last().unwrap()), (0x06, 0xc0));
        let mut chip = Chip::new(0, 1).unwrap();
        for (id, len) in FEATURES {
            let at = d.windows(2).position(|w| w == [0x85, id]).unwrap();
            assert_eq!(d[at + 3], len);
            if id == report::GPIO_SET {
                continue; // set only
            }
            let r = chip.get_report(id, 0).unwrap();
            assert!(r.len() <= len as usize + 1, "report {id:#x}: {r:?}");
        }
    }

    #[test]
    fn stats_describe_in_microseconds() {
        let mut s = Stats::default();
        assert_eq!(s.describe(), "no samples");
        s.record(2_000);
        s.record(4_000);
        assert_eq!(s.mean(), 3_000);
        assert_eq!(s.describe(), "2 samples, min/mean/max 2/3/4 us");
    }
}
