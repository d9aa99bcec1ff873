//! Interrupt names by number, from `/proc/interrupts`: the BPF side logs
//! only the number (reading `irqaction->name` on every interrupt would cost
//! more than reading the table once here).

use std::collections::HashMap;

/// IRQ number to the names of its handlers (`virtio0-input.0`).
#[derive(Debug, Clone, Default)]
pub struct IrqNames {
    names: HashMap<i32, String>,
}

impl IrqNames {
    /// Reads `/proc/interrupts` (empty when it cannot be read).
    pub fn read() -> IrqNames {
        std::fs::read_to_string("/proc/interrupts")
            .map(|t| IrqNames::parse(&t))
            .unwrap_or_default()
    }

    /// Parses the text of `/proc/interrupts`: a header of `CPUn` columns,
    /// then per numbered IRQ its counts, chip, hardware IRQ and handler names.
    pub fn parse(text: &str) -> IrqNames {
        let mut lines = text.lines();
        let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
        let mut names = HashMap::new();
        for line in lines {
            let Some((num, rest)) = line.trim_start().split_once(':') else {
                continue;
            };
            let Ok(irq) = num.trim().parse::<i32>() else {
                continue;
            };
            let words: Vec<&str> = rest.split_whitespace().collect();
            if words.len() > cpus + 2 {
                names.insert(irq, words[cpus + 2..].join(" "));
            }
        }
        IrqNames { names }
    }

    /// The handler names of `irq`, or `irqN` when unknown.
    pub fn name(&self, irq: i32) -> String {
        self.names
            .get(&irq)
            .cloned()
            .unwrap_or_else(|| format!("irq{irq}"))
    }

    /// Whether `irq` is known.
    pub fn knows(&self, irq: i32) -> bool {
        self.names.contains_key(&irq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_interrupts_names_by_number() {
        let text = "           CPU0       CPU1       \n  0:         45          0   IO-APIC   2-edge      timer\n 11:      12345        678   IO-APIC  11-fasteoi   virtio0, uhci_hcd:usb1\n 24:          0          5  PCI-MSIX-0000:00:03.0   0-edge      virtio1-config\nNMI:          0          0   Non-maskable interrupts\nLOC:     123456     654321   Local timer interrupts\n";
        let n = IrqNames::parse(text);
        assert_eq!(n.name(0), "timer");
        assert_eq!(n.name(11), "virtio0, uhci_hcd:usb1");
        assert_eq!(n.name(24), "virtio1-config");
        assert_eq!(n.name(99), "irq99");
        assert!(!n.knows(99));
    }

    #[test]
    fn this_machine_has_named_interrupts() {
        let n = IrqNames::read();
        if std::path::Path::new("/proc/interrupts").exists() {
            assert!(!n.names.is_empty(), "/proc/interrupts parsed to nothing");
        }
    }
}
