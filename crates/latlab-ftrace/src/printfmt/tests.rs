//! Print fmts of real and hand-written events rendered as trace-cmd does,
//! and the direct steps checked against the evaluator.

use super::*;
use crate::symbols::Kallsyms;

/// `rec` rendered by the print fmt of the event `format_text` describes.
pub(super) fn render(format_text: &str, rec: &[u8]) -> String {
    let f = EventFormat::parse("test", format_text, 8).unwrap();
    let p = PrintFmt::compile(&f, 8).unwrap();
    let k = Kallsyms::parse(b"ffffffff81000000 T do_thing\n");
    let mut out = Vec::new();
    p.render(
        &mut out,
        rec,
        Endian::Little,
        &Ctx {
            long_size: 8,
            kallsyms: &k,
        },
        &mut Vec::new(),
        &mut Vec::new(),
    );
    String::from_utf8(out).unwrap()
}

const HDR: &str = "name: t\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

#[test]
fn sched_switch_state_expression() {
    let text = format!(
            "{HDR}\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\nprint fmt: \"prev_state=%s%s\", (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) - 1), \"|\", {{ 0x00000001, \"S\" }}, {{ 0x00000002, \"D\" }}) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002) + 1) << 1) ? \"+\" : \"\"\n"
        );
    let mut rec = vec![0u8; 16];
    assert_eq!(render(&text, &rec), "prev_state=R");
    rec[8] = 1;
    assert_eq!(render(&text, &rec), "prev_state=S");
    rec[8] = 3;
    assert_eq!(render(&text, &rec), "prev_state=S|D");
    rec[8] = 8;
    assert_eq!(render(&text, &rec), "prev_state=R+");
}

#[test]
fn symbolic_strings_casts_and_symbols() {
    let text = format!(
            "{HDR}\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\nprint fmt: \"vec=%u [action=%s] name=%s fn=%ps neg=%lld x=%d\", REC->vec, __print_symbolic(REC->vec, {{ 0, \"HI\" }}, {{ 1, \"TIMER\" }}), __get_str(name), REC->function, (long long)(int)REC->vec - 5, UNKNOWN_MACRO\n"
        );
    let mut rec = vec![0u8; 32];
    rec[8] = 1;
    rec[12..16].copy_from_slice(&((3u32 << 16) | 24).to_le_bytes());
    rec[24..27].copy_from_slice(b"ab\0");
    rec[16..24].copy_from_slice(&0xffffffff81000000u64.to_le_bytes());
    assert_eq!(
        render(&text, &rec),
        "vec=1 [action=TIMER] name=ab fn=do_thing neg=-4 x=0"
    );
    rec[8] = 7;
    assert_eq!(
        render(&text, &rec),
        "vec=7 [action=0x7] name=ab fn=do_thing neg=2 x=0"
    );
}

#[test]
fn hex_and_arrays() {
    let text = format!(
            "{HDR}\tfield:u8 mac[4];\toffset:8;\tsize:4;\tsigned:0;\n\tfield:u16 v[2];\toffset:12;\tsize:4;\tsigned:0;\nprint fmt: \"%s %s %s %d\", __print_hex(REC->mac, 4), __print_hex_str(REC->mac, 2), __print_array(REC->v, 2, 2), REC->v[1]\n"
        );
    let mut rec = vec![0u8; 16];
    rec[8..12].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    rec[12..16].copy_from_slice(&[1, 0, 2, 0]);
    assert_eq!(render(&text, &rec), "de ad be ef dead {0x1,0x2} 2");
}

/// The direct steps print what the evaluator prints, for every shape
/// they take over (plain fields, array elements, `x != k ? a : b`).
#[test]
fn direct_steps_equal_the_evaluator() {
    let text = format!(
            "{HDR}\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:int order;\toffset:16;\tsize:4;\tsigned:1;\n\tfield:u16 v[2];\toffset:20;\tsize:4;\tsigned:0;\n\tfield:char comm[4];\toffset:24;\tsize:4;\tsigned:0;\nprint fmt: \"page=%p pfn=0x%lx order=%d o2=%5d v1=%u c=%s eq=%d\", REC->pfn != -1UL ? (((struct page *)vmemmap_base) + (REC->pfn)) : ((void *)0), REC->pfn != -1UL ? REC->pfn : 0, REC->order, REC->order, REC->v[1], REC->comm, REC->order == 3 ? REC->v[0] : -2\n"
        );
    let f = EventFormat::parse("test", &text, 8).unwrap();
    let p = PrintFmt::compile(&f, 8).unwrap();
    let steps = p.steps.as_ref().unwrap();
    assert!(steps.iter().any(|s| matches!(s, Step::Cond(..))));
    assert!(steps.iter().any(|s| matches!(s, Step::Int(..))));
    let mut plain = p.clone();
    plain.steps = None;
    let k = Kallsyms::default();
    let ctx = Ctx {
        long_size: 8,
        kallsyms: &k,
    };
    let mut recs = Vec::new();
    for (pfn, order) in [(5u64, 3i32), (u64::MAX, -7), (0, 0)] {
        let mut r = vec![0u8; 28];
        r[8..16].copy_from_slice(&pfn.to_le_bytes());
        r[16..20].copy_from_slice(&order.to_le_bytes());
        r[20..24].copy_from_slice(&[1, 0, 0xff, 0xff]);
        r[24..28].copy_from_slice(b"ab\0\0");
        recs.push(r);
    }
    recs.push(vec![0u8; 12]); // a record shorter than its fields
    for r in &recs {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        p.render(
            &mut a,
            r,
            Endian::Little,
            &ctx,
            &mut Vec::new(),
            &mut Vec::new(),
        );
        plain.render(
            &mut b,
            r,
            Endian::Little,
            &ctx,
            &mut Vec::new(),
            &mut Vec::new(),
        );
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
    }
}

#[test]
fn unknown_field_is_a_compile_error() {
    let text = format!("{HDR}print fmt: \"%d\", REC->nope\n");
    let f = EventFormat::parse("test", &text, 8).unwrap();
    assert!(PrintFmt::compile(&f, 8).unwrap_err().contains("nope"));
}
