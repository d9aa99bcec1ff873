//! Flag names and hex text: `__print_flags` output and the names trace-cmd
//! knows without the format file.

use crate::printf::push_hex_digits;

/// Softirq and hrtimer names that trace-cmd knows even when the format file
/// does not resolve them.
pub(super) fn known_flag(name: &str) -> Option<u64> {
    Some(match name {
        "HI_SOFTIRQ" => 0,
        "TIMER_SOFTIRQ" => 1,
        "NET_TX_SOFTIRQ" => 2,
        "NET_RX_SOFTIRQ" => 3,
        "BLOCK_SOFTIRQ" => 4,
        "IRQ_POLL_SOFTIRQ" => 5,
        "TASKLET_SOFTIRQ" => 6,
        "SCHED_SOFTIRQ" => 7,
        "HRTIMER_SOFTIRQ" => 8,
        "RCU_SOFTIRQ" => 9,
        "HRTIMER_NORESTART" => 0,
        "HRTIMER_RESTART" => 1,
        _ => return None,
    })
}

/// Appends `0x` and the lowercase hex digits of `v`.
pub(super) fn push_hex(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(b"0x");
    push_hex_digits(out, v);
}

/// Writes the names of the set flags of `val` like the kernel's
/// `__print_flags`: names joined by `delim`, leftover bits as hex.
pub(super) fn write_flags<'p>(
    out: &mut Vec<u8>,
    val: u64,
    delim: &[u8],
    pairs: impl Iterator<Item = (u64, &'p [u8])>,
) {
    let start = out.len();
    let mut rest = val;
    for (fv, label) in pairs {
        if val == 0 && fv == 0 {
            out.extend_from_slice(label);
            break;
        }
        if fv != 0 && rest & fv == fv {
            if out.len() > start {
                out.extend_from_slice(delim);
            }
            out.extend_from_slice(label);
            rest &= !fv;
        }
    }
    if rest != 0 {
        if out.len() > start {
            out.extend_from_slice(delim);
        }
        push_hex(out, rest);
    }
}
