//! The committed BPF object is what `bpf/watch.bpf.c` compiles to (make
//! bpf-check): with the clang that made it, byte for byte; with another
//! clang, the source must still compile without warnings. Without clang the
//! check says so and passes (CI installs clang).

use std::path::Path;
use std::process::Command;

#[test]
fn the_committed_object_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(root.join("scripts/bpf.sh"))
        .arg("check")
        .current_dir(&root)
        .output()
        .expect("scripts/bpf.sh runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    eprintln!("{text}");
    if std::env::var("LATLAB_REQUIRE_PRIVILEGE").as_deref() == Ok("1") {
        assert!(
            !text.contains("no clang") && !text.contains("no libbpf"),
            "{text}"
        );
    }
}

#[test]
fn the_object_has_every_program_and_the_btf_aya_relocates_against() {
    let object = latlab_watch::loader::OBJECT;
    assert_eq!(&object[..4], b"\x7fELF");
    let has = |needle: &[u8]| object.windows(needle.len()).any(|w| w == needle);
    for (program, tracepoint, _) in latlab_watch::loader::PROGRAMS {
        assert!(has(program.as_bytes()), "{program} missing");
        assert!(
            has(format!("tp_btf/{tracepoint}").as_bytes()),
            "{tracepoint} missing"
        );
    }
    assert!(has(b".BTF.ext"), "no CO-RE relocations");
    assert!(!has(b".debug_info"), "DWARF left in the object");
}
