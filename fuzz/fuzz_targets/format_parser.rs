//! Event format parser, print fmt compiler and renderer: the first part of the
//! input is a format file, the rest a record to render with it.
#![no_main]
use latlab_ftrace::format::EventFormat;
use latlab_ftrace::printfmt::PrintFmt;
use latlab_ftrace::symbols::Kallsyms;
use latlab_ftrace::Endian;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (text, record) = data.split_at(split);
    let text = String::from_utf8_lossy(text);
    let Ok(f) = EventFormat::parse("fuzz", &text, 8) else { return };
    for field in f.fields.iter().chain(f.common_fields.iter()) {
        let _ = field.value(record, Endian::Little);
        let _ = field.value(record, Endian::Big);
    }
    if let Ok(p) = PrintFmt::compile(&f, 8) {
        let k = Kallsyms::parse(b"ffffffff81000000 T a\nffffffff81000100 T b\n");
        let mut out = Vec::new();
        p.render_to(&mut out, record, Endian::Little, 8, &k);
    }
});
