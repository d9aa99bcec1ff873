//! The object's calls of the kfunc `bpf_rdonly_cast()`, made real.
//!
//! aya 0.13 resolves no kfunc calls, so `bpf/watch.bpf.c` writes each as a
//! helper call to a number no kernel has ([`PLACEHOLDER`]); before the
//! object is parsed, [`patch_rdonly_cast`] rewrites every such call in its
//! code into a kfunc call (`src_reg` [`BPF_PSEUDO_KFUNC_CALL`]) of the
//! kfunc's id in the running kernel's BTF, which is what libbpf would have
//! written for an `extern ... __ksym` declaration. Only the programs that
//! read kernel memory with plain loads have such calls; their `_probe`
//! twins, for kernels without the kfunc, have none (see
//! [`super::PROBE_TWINS`]).

use object::{Object, ObjectSection, SectionFlags};

/// The helper number the BPF source calls in place of `bpf_rdonly_cast()`
/// (`RDONLY_CAST_PLACEHOLDER` in bpf/watch.bpf.c).
pub const PLACEHOLDER: i32 = 0x7ca5_7ca5;

/// The kfunc the placeholder stands for, by its name in the kernel's BTF.
pub const KFUNC: &str = "bpf_rdonly_cast";

/// `BPF_JMP | BPF_CALL`: a call instruction's opcode.
const CALL: u8 = 0x85;

/// `src_reg` of a call to a kfunc whose `imm` is its BTF id in vmlinux
/// (linux/bpf.h).
const BPF_PSEUDO_KFUNC_CALL: u8 = 2;

/// `SHF_EXECINSTR`: the section holds instructions.
const SHF_EXECINSTR: u64 = 0x4;

/// Returns `object` with every call of [`PLACEHOLDER`] in its executable
/// sections turned into a call of the kfunc with BTF id `kfunc_id`, and how
/// many calls were rewritten. Instructions are 8 bytes, little-endian (BPF
/// objects for the hosts latlab runs on); a section that is not a whole
/// number of instructions is an error, as is an object that is not ELF.
pub fn patch_rdonly_cast(object: &[u8], kfunc_id: u32) -> Result<(Vec<u8>, usize), String> {
    // The ELF parser reads its headers in place, at their alignment.
    let copy = super::bpf::aligned(object);
    let file =
        object::File::parse(copy.as_slice()).map_err(|e| format!("not an ELF object: {e}"))?;
    let mut out = object.to_vec();
    let mut patched = 0;
    for section in file.sections() {
        let SectionFlags::Elf { sh_flags } = section.flags() else {
            continue;
        };
        if sh_flags & SHF_EXECINSTR == 0 {
            continue;
        }
        let Some((start, size)) = section.file_range() else {
            continue;
        };
        let name = section.name().unwrap_or("?");
        if size % 8 != 0 {
            return Err(format!(
                "section {name}: {size} bytes, not whole instructions"
            ));
        }
        let (start, end) = (start as usize, (start + size) as usize);
        if end > out.len() {
            return Err(format!("section {name} runs past the end of the object"));
        }
        for insn in out[start..end].chunks_exact_mut(8) {
            let imm = i32::from_le_bytes([insn[4], insn[5], insn[6], insn[7]]);
            // dst_reg and src_reg 0, no offset: a plain helper call.
            if insn[0] == CALL && insn[1] == 0 && insn[2..4] == [0, 0] && imm == PLACEHOLDER {
                insn[1] = BPF_PSEUDO_KFUNC_CALL << 4;
                insn[4..8].copy_from_slice(&kfunc_id.to_le_bytes());
                patched += 1;
            }
        }
    }
    Ok((out, patched))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets of the placeholder calls in `object` (any 8-byte-aligned
    /// spot of the file, code or not).
    fn placeholder_calls(object: &[u8]) -> Vec<usize> {
        let mut call = vec![CALL, 0, 0, 0];
        call.extend_from_slice(&PLACEHOLDER.to_le_bytes());
        (0..object.len() - 7)
            .step_by(8)
            .filter(|&at| object[at..at + 8] == call[..])
            .collect()
    }

    #[test]
    fn every_placeholder_call_becomes_a_kfunc_call_and_nothing_else_changes() {
        let object = super::super::OBJECT;
        let sites = placeholder_calls(object);
        // on_hrtimer_entry reads the clock once; on_waking reads a clock
        // base for each of the two callback slots (the loop is unrolled).
        assert_eq!(sites.len(), 3, "placeholder calls at {sites:?}");
        let (patched, n) = patch_rdonly_cast(object, 65_477).unwrap();
        assert_eq!(n, 3);
        assert_eq!(patched.len(), object.len());
        assert!(placeholder_calls(&patched).is_empty());
        for at in &sites {
            assert_eq!(patched[*at], CALL);
            assert_eq!(patched[*at + 1], 0x20, "src_reg 2 (kfunc), dst_reg 0");
            assert_eq!(&patched[*at + 4..*at + 8], &65_477u32.to_le_bytes());
        }
        let changed: Vec<usize> = (0..object.len())
            .filter(|&i| object[i] != patched[i])
            .collect();
        assert!(
            changed
                .iter()
                .all(|i| sites.iter().any(|s| (s..&(s + 8)).contains(&i))),
            "bytes outside the calls changed: {changed:?}"
        );
    }

    #[test]
    fn a_placeholder_outside_code_is_left_alone_and_garbage_is_an_error() {
        // The object with the placeholder's bytes appended: past every
        // section, so not code.
        let mut object = super::super::OBJECT.to_vec();
        while object.len() % 8 != 0 {
            object.push(0);
        }
        object.extend_from_slice(&[CALL, 0, 0, 0]);
        object.extend_from_slice(&PLACEHOLDER.to_le_bytes());
        let (patched, n) = patch_rdonly_cast(&object, 7).unwrap();
        assert_eq!(n, 3);
        assert_eq!(placeholder_calls(&patched).len(), 1);
        assert!(patch_rdonly_cast(b"not an object at all", 7)
            .unwrap_err()
            .contains("not an ELF object"));
    }
}
