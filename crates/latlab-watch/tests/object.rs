//! The committed BPF object is what `bpf/watch.bpf.c` compiles to (make
//! bpf-check): with the clang that made it, byte for byte; with another
//! clang, the source must still compile without warnings. Without clang (or
//! libbpf's headers) the test skips with the reason, or fails under
//! `LATLAB_REQUIRE_PRIVILEGE=1` (CI installs them).

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
    latlab_testkit::require(
        "the BPF object check: clang, llvm-strip and libbpf's headers",
        !text.contains("bpf check skipped: no "),
        "apt-get install clang llvm libbpf-dev",
    );
    if text.contains("is not the clang that made the committed object") {
        latlab_testkit::skip::skip(
            "the BPF object's byte comparison: this clang is not the one that made it \
             (the source compiled; see crates/latlab-watch/bpf/CLANG_VERSION)",
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
