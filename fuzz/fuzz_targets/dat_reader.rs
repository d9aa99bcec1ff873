//! .dat reader: metadata, per-CPU streams (plain and compressed) and rendering.
#![no_main]
use latlab_ftrace::render::Renderer;
use latlab_ftrace::DatFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = DatFile::from_bytes(data.to_vec()) else { return };
    let mut r = Renderer::new(&f.meta);
    let mut ev = f.events();
    let mut line = Vec::new();
    let mut n = 0;
    while let Some(e) = ev.next_event() {
        let Ok(e) = e else { break };
        line.clear();
        r.line(&e, &mut line);
        n += 1;
        if n > 100_000 {
            break;
        }
    }
});
