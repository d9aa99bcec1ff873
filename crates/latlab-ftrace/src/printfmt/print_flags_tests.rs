//! Regressions of `__print_flags` over a masked field (timer_start's `flags=`).

use super::tests::render;

/// Regression: timer_start's `flags=` came out empty.
#[test]
fn print_flags_of_masked_value() {
    let real = "name: timer_start\nID: 466\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:void * timer;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:unsigned long expires;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:unsigned long bucket_expiry;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:unsigned long now;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:unsigned int flags;\toffset:48;\tsize:4;\tsigned:0;\n\nprint fmt: \"timer=%p function=%ps expires=%lu [timeout=%ld] bucket_expiry=%lu cpu=%u idx=%u flags=%s\", REC->timer, REC->function, REC->expires, (long)REC->expires - REC->now, REC->bucket_expiry, REC->flags & 0x0003FFFF, REC->flags >> 22, __print_flags(REC->flags & (0x00040000 | 0x00080000 | 0x00100000 | 0x00200000), \"|\", { 0x00040000, \"M\" }, { 0x00080000, \"D\" }, { 0x00100000, \"P\" }, { 0x00200000, \"I\" })\n";
    let mut rec = vec![0u8; 52];
    rec[48..52].copy_from_slice(&((23u32 << 22) | 0x380000 | 1).to_le_bytes());
    let out = render(real, &rec);
    assert!(out.ends_with("idx=23 flags=D|P|I"), "{out}");
    let text = "name: timer_start\nID: 9\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\tfield:unsigned int flags;\toffset:8;\tsize:4;\tsigned:0;\nprint fmt: \"idx=%u flags=%s\", REC->flags >> 22, __print_flags(REC->flags & (0x00040000 | 0x00080000 | 0x00100000 | 0x00200000), \"|\", { 0x00040000, \"M\" }, { 0x00080000, \"D\" }, { 0x00100000, \"P\" }, { 0x00200000, \"I\" })\n";
    let mut rec = vec![0u8; 12];
    rec[8..12].copy_from_slice(&((23u32 << 22) | 0x380000 | 1).to_le_bytes());
    assert_eq!(render(text, &rec), "idx=23 flags=D|P|I");
}
