//! Ring-buffer page decoder: any bytes as a page, in every layout and byte order.
#![no_main]
use latlab_ftrace::format::PageLayout;
use latlab_ftrace::page::Page;
use latlab_ftrace::Endian;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, page)) = data.split_first() else { return };
    let layout = if sel & 1 == 0 { PageLayout::LP64 } else { PageLayout::ILP32 };
    let endian = if sel & 2 == 0 { Endian::Little } else { Endian::Big };
    if let Ok(p) = Page::parse(page, &layout, endian) {
        let mut last_pos = 0;
        for r in p.records() {
            match r {
                Ok(r) => {
                    assert!(r.offset >= last_pos);
                    last_pos = r.offset;
                    assert!(r.data.len() <= page.len());
                }
                Err(_) => break,
            }
        }
    }
});
