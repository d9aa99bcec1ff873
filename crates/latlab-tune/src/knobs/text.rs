//! The text forms of knob values: hex masks, CPU lists, the bracketed
//! choice, the kernel command line.

use latlab_fix::cpu_list;

/// `always [madvise] never` → `madvise`.
pub(crate) fn bracketed(text: &str) -> String {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap_or(text)
        .to_string()
}

/// A kernel hex mask (`3`, `ff,ffffffff`) as a CPU list.
pub fn mask_to_list(mask: &str) -> Option<String> {
    let mut cpus = Vec::new();
    let digits: String = mask.trim().chars().filter(|c| *c != ',').collect();
    for (i, c) in digits.chars().rev().enumerate() {
        let nibble = c.to_digit(16)?;
        cpus.extend((0..4).filter(|b| nibble & (1 << b) != 0).map(|b| i * 4 + b));
    }
    Some(cpu_list(&cpus))
}

/// CPUs as a kernel hex mask, in comma-separated groups of 32 bits.
pub fn list_to_mask(cpus: &[usize]) -> String {
    let words = cpus.iter().max().map_or(1, |m| m / 32 + 1);
    let mut bits = vec![0u32; words];
    for &cpu in cpus {
        bits[cpu / 32] |= 1 << (cpu % 32);
    }
    let mut groups: Vec<String> = bits.iter().rev().map(|w| format!("{w:08x}")).collect();
    groups[0] = format!("{:x}", bits[words - 1]);
    groups.join(",")
}

/// The kernel command line, `/proc/cmdline`.
pub fn cmdline() -> String {
    std::fs::read_to_string("/proc/cmdline").unwrap_or_default()
}

/// A parameter's value on a command line: `Some("1")` for `name=1`, the
/// bare name for a flag, `None` when absent (the last one wins).
pub fn boot_parameter(cmdline: &str, name: &str) -> Option<String> {
    let kernel_part = cmdline.split(" -- ").next().unwrap_or("");
    kernel_part
        .split_whitespace()
        .rev()
        .find_map(|word| match word.split_once('=') {
            Some((key, value)) if key == name => Some(value.to_string()),
            None if word == name => Some(name.to_string()),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_lists_convert_both_ways() {
        assert_eq!(mask_to_list("3").unwrap(), "0-1");
        assert_eq!(mask_to_list("00000001,00000000").unwrap(), "32");
        assert_eq!(list_to_mask(&[0, 1]), "3");
        assert_eq!(list_to_mask(&[32]), "1,00000000");
        assert_eq!(mask_to_list(&list_to_mask(&[1, 5, 40])).unwrap(), "1,5,40");
    }

    #[test]
    fn boot_parameters_read_as_value_flag_or_absent() {
        let line = "quiet isolcpus=1 nohz_full=1 -- init arg=2";
        assert_eq!(boot_parameter(line, "nohz_full").as_deref(), Some("1"));
        assert_eq!(boot_parameter(line, "quiet").as_deref(), Some("quiet"));
        assert_eq!(boot_parameter(line, "arg"), None);
        assert_eq!(bracketed("always [madvise] never"), "madvise");
    }
}
