//! `/dev/uhid` events (`linux/uhid.h`): `struct uhid_event` is packed, in
//! the machine's byte order, and every read or write moves one whole event.

/// `sizeof(struct uhid_event)`: the type and the largest member, `uhid_create2_req`.
pub const EVENT_SIZE: usize = 4 + 128 + 64 + 64 + 2 + 2 + 4 * 4 + DATA_MAX;
/// `UHID_DATA_MAX`, also `HID_MAX_DESCRIPTOR_SIZE`.
pub const DATA_MAX: usize = 4096;
/// `BUS_USB` (`linux/input.h`): the driver matches USB devices.
pub const BUS_USB: u16 = 0x03;

const DESTROY: u32 = 1;
const START: u32 = 2;
const STOP: u32 = 3;
const OPEN: u32 = 4;
const CLOSE: u32 = 5;
const OUTPUT: u32 = 6;
const GET_REPORT: u32 = 9;
const GET_REPORT_REPLY: u32 = 10;
const CREATE2: u32 = 11;
const SET_REPORT: u32 = 13;
const SET_REPORT_REPLY: u32 = 14;

/// An event the kernel sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The HID driver started the device.
    Start,
    /// ... stopped it.
    Stop,
    /// Someone opened the device (the driver's `hid_hw_open`).
    Open,
    /// ... closed it.
    Close,
    /// An output report (the CP2112's SMBus requests; unused here).
    Output {
        /// The report, id first.
        data: Vec<u8>,
    },
    /// The driver asks for a report; answer with [`get_report_reply`].
    GetReport {
        /// Request id to echo.
        id: u32,
        /// Report id.
        report: u8,
    },
    /// The driver sends a report; answer with [`set_report_reply`].
    SetReport {
        /// Request id to echo.
        id: u32,
        /// Report id.
        report: u8,
        /// The report, id first.
        data: Vec<u8>,
    },
    /// Another event type.
    Other(u32),
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decodes one event read from `/dev/uhid` (`None`: too short).
pub fn decode(b: &[u8]) -> Option<Event> {
    if b.len() < 4 {
        return None;
    }
    let kind = u32_at(b, 0);
    Some(match kind {
        START => Event::Start,
        STOP => Event::Stop,
        OPEN => Event::Open,
        CLOSE => Event::Close,
        OUTPUT => {
            // struct uhid_output_req { data[4096]; __u16 size; __u8 rtype; }
            if b.len() < 4 + DATA_MAX + 3 {
                return None;
            }
            let size = usize::from(u16_at(b, 4 + DATA_MAX)).min(DATA_MAX);
            Event::Output {
                data: b[4..4 + size].to_vec(),
            }
        }
        GET_REPORT => {
            // struct uhid_get_report_req { __u32 id; __u8 rnum; __u8 rtype; }
            if b.len() < 10 {
                return None;
            }
            Event::GetReport {
                id: u32_at(b, 4),
                report: b[8],
            }
        }
        SET_REPORT => {
            // struct uhid_set_report_req { __u32 id; __u8 rnum; __u8 rtype; __u16 size; data[] }
            if b.len() < 12 {
                return None;
            }
            let size = usize::from(u16_at(b, 10)).min(DATA_MAX).min(b.len() - 12);
            Event::SetReport {
                id: u32_at(b, 4),
                report: b[8],
                data: b[12..12 + size].to_vec(),
            }
        }
        other => Event::Other(other),
    })
}

fn event(kind: u32) -> Vec<u8> {
    let mut b = vec![0u8; EVENT_SIZE];
    b[..4].copy_from_slice(&kind.to_ne_bytes());
    b
}

/// `UHID_CREATE2`: a new HID device with this name, ids and report descriptor.
pub fn create2(name: &str, bus: u16, vendor: u32, product: u32, descriptor: &[u8]) -> Vec<u8> {
    let mut b = event(CREATE2);
    let name = name.as_bytes();
    let n = name.len().min(127);
    b[4..4 + n].copy_from_slice(&name[..n]);
    // name[128] phys[64] uniq[64], then rd_size bus vendor product version country rd_data.
    let at = 4 + 128 + 64 + 64;
    let len = descriptor.len().min(DATA_MAX);
    b[at..at + 2].copy_from_slice(&(len as u16).to_ne_bytes());
    b[at + 2..at + 4].copy_from_slice(&bus.to_ne_bytes());
    b[at + 4..at + 8].copy_from_slice(&vendor.to_ne_bytes());
    b[at + 8..at + 12].copy_from_slice(&product.to_ne_bytes());
    b[at + 12..at + 16].copy_from_slice(&1u32.to_ne_bytes());
    b[at + 20..at + 20 + len].copy_from_slice(&descriptor[..len]);
    b
}

/// `UHID_DESTROY`.
pub fn destroy() -> Vec<u8> {
    event(DESTROY)
}

/// `UHID_GET_REPORT_REPLY`: `Ok(report)` or `Err(errno)`.
pub fn get_report_reply(id: u32, reply: Result<&[u8], u16>) -> Vec<u8> {
    let mut b = event(GET_REPORT_REPLY);
    b[4..8].copy_from_slice(&id.to_ne_bytes());
    match reply {
        Ok(data) => {
            let len = data.len().min(DATA_MAX);
            b[10..12].copy_from_slice(&(len as u16).to_ne_bytes());
            b[12..12 + len].copy_from_slice(&data[..len]);
        }
        Err(errno) => b[8..10].copy_from_slice(&errno.to_ne_bytes()),
    }
    b
}

/// `UHID_SET_REPORT_REPLY`: 0 or an errno.
pub fn set_report_reply(id: u32, errno: u16) -> Vec<u8> {
    let mut b = event(SET_REPORT_REPLY);
    b[4..8].copy_from_slice(&id.to_ne_bytes());
    b[8..10].copy_from_slice(&errno.to_ne_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_has_the_kernel_size() {
        // 4 + sizeof(struct uhid_create2_req), the union's largest member.
        assert_eq!(EVENT_SIZE, 4376);
        assert_eq!(destroy().len(), EVENT_SIZE);
    }

    #[test]
    fn create2_puts_the_fields_at_the_packed_offsets() {
        let b = create2("x", BUS_USB, 0x10c4, 0xea90, &[1, 2, 3]);
        assert_eq!(u32_at(&b, 0), CREATE2);
        assert_eq!(b[4], b'x');
        assert_eq!(u16_at(&b, 260), 3);
        assert_eq!(u16_at(&b, 262), BUS_USB);
        assert_eq!(u32_at(&b, 264), 0x10c4);
        assert_eq!(u32_at(&b, 268), 0xea90);
        assert_eq!(&b[280..283], &[1, 2, 3]);
    }

    #[test]
    fn requests_decode_and_replies_echo_the_id() {
        let mut b = event(GET_REPORT);
        b[4..8].copy_from_slice(&77u32.to_ne_bytes());
        b[8] = 0x03;
        assert_eq!(decode(&b), Some(Event::GetReport { id: 77, report: 3 }));
        let mut s = event(SET_REPORT);
        s[4..8].copy_from_slice(&78u32.to_ne_bytes());
        s[8] = 0x04;
        s[10..12].copy_from_slice(&3u16.to_ne_bytes());
        s[12..15].copy_from_slice(&[4, 0xff, 1]);
        assert_eq!(
            decode(&s),
            Some(Event::SetReport {
                id: 78,
                report: 4,
                data: vec![4, 0xff, 1]
            })
        );
        let r = get_report_reply(77, Ok(&[3, 1]));
        assert_eq!((u32_at(&r, 0), u32_at(&r, 4)), (GET_REPORT_REPLY, 77));
        assert_eq!((u16_at(&r, 8), u16_at(&r, 10)), (0, 2));
        assert_eq!(&r[12..14], &[3, 1]);
        let e = get_report_reply(5, Err(5));
        assert_eq!((u16_at(&e, 8), u16_at(&e, 10)), (5, 0));
        let w = set_report_reply(78, 0);
        assert_eq!((u32_at(&w, 0), u32_at(&w, 4)), (SET_REPORT_REPLY, 78));
        assert_eq!(decode(&[1, 0]), None);
        assert_eq!(decode(&event(START)), Some(Event::Start));
    }
}
