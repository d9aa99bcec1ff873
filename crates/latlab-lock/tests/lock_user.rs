//! latlab's crates as a user gets them: `cargo package` packs every crate
//! of the workspace (each with its description, license, README and
//! repository), and `examples/lock-user`, a project outside the workspace
//! that depends on `latlab-lock = "0.1.0"`, builds against the packaged
//! crates (latlab-lock and the crates it depends on, unpacked from their
//! `.crate` files: not the source tree) and runs.
//!
//! Everything is built under `target/lock-user`, kept between runs, so
//! only the first run compiles the dependencies.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// latlab-lock and the workspace crates it depends on.
const NEEDED: [&str; 5] = [
    "latlab-rt",
    "latlab-envelope",
    "latlab-measure",
    "latlab-load",
    "latlab-lock",
];

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // The outer build's settings must not leak into the inner ones.
    command
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR");
    command
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The file `inner` of a `.crate` archive.
fn crate_file(archive: &Path, inner: &str) -> String {
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(archive)
            .arg("-O")
            .arg(inner),
        &format!("reading {inner} from {}", archive.display()),
    )
}

#[test]
fn lock_user_example_builds_and_runs_against_the_packaged_crates() {
    let started = Instant::now();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    // CARGO_TARGET_TMPDIR is <target>/tmp.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("lock-user");
    std::fs::create_dir_all(&target).unwrap();

    run(
        cargo()
            .current_dir(&workspace)
            .args([
                "package",
                "--workspace",
                "--no-verify",
                "--allow-dirty",
                "--offline",
            ])
            .arg("--target-dir")
            .arg(&target),
        "cargo package --workspace",
    );
    let packages = target.join("package");
    let mut packed = Vec::new();
    for entry in std::fs::read_dir(&packages).unwrap() {
        let path = entry.unwrap().path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".crate"))
        else {
            continue;
        };
        let manifest = crate_file(&path, &format!("{stem}/Cargo.toml"));
        if !manifest.contains("publish = false") {
            for field in [
                "description = ",
                "license = ",
                "readme = ",
                "repository = ",
                "keywords = ",
                "categories = ",
            ] {
                assert!(
                    manifest.contains(field),
                    "{stem}: no {field}in its manifest"
                );
            }
            let readme = crate_file(&path, &format!("{stem}/README.md"));
            assert!(
                readme.starts_with("# "),
                "{stem}: README.md is not a README"
            );
        }
        assert!(
            !manifest.contains("path = \"../"),
            "{stem}: the packaged manifest still points into the source tree"
        );
        packed.push(stem.to_string());
    }
    packed.sort();
    for name in [
        "latlab-rt",
        "latlab-measure",
        "latlab-lock",
        "latlab-report",
        "latlab-document",
        "latlab",
    ] {
        assert!(
            packed.contains(&format!("{name}-0.1.0")),
            "{name} was not packaged: {packed:?}"
        );
    }

    // The crates the example needs (latlab-lock and what it depends on), unpacked (tar keeps the archive's
    // times, so an unchanged crate is not rebuilt next time).
    let unpacked = target.join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let mut patches = Vec::new();
    for name in NEEDED {
        let dir = unpacked.join(format!("{name}-0.1.0"));
        let _ = std::fs::remove_dir_all(&dir);
        run(
            Command::new("tar")
                .arg("xzf")
                .arg(packages.join(format!("{name}-0.1.0.crate")))
                .arg("-C")
                .arg(&unpacked),
            &format!("unpacking {name}"),
        );
        patches.push(format!(
            "patch.crates-io.{name}.path={:?}",
            dir.display().to_string()
        ));
    }

    // The example, copied out of the source tree (its build writes a
    // Cargo.lock), with the workspace's lock so that the dependency
    // versions the workspace already downloaded are used.
    let example = target.join("lock-user");
    std::fs::create_dir_all(example.join("src")).unwrap();
    let source = workspace.join("examples/lock-user");
    for file in ["Cargo.toml", "src/main.rs"] {
        let text = std::fs::read(source.join(file)).unwrap();
        if std::fs::read(example.join(file)).ok().as_deref() != Some(&text[..]) {
            std::fs::write(example.join(file), text).unwrap();
        }
    }
    if !example.join("Cargo.lock").exists() {
        std::fs::copy(workspace.join("Cargo.lock"), example.join("Cargo.lock")).unwrap();
    }
    let with_patches = |command: &mut Command| {
        for patch in &patches {
            command.arg("--config").arg(patch);
        }
    };
    let mut build = cargo();
    build
        .current_dir(&example)
        .args(["run", "--quiet", "--offline", "--target-dir"])
        .arg(target.join("build"));
    with_patches(&mut build);
    let stdout = run(&mut build, "building and running examples/lock-user");
    assert!(
        stdout.starts_with("lock-user: 250 periods of 2000 us;"),
        "{stdout}"
    );

    let mut tree = cargo();
    tree.current_dir(&example)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none"]);
    with_patches(&mut tree);
    let tree = run(&mut tree, "cargo tree of the example");
    for name in NEEDED {
        let line = tree
            .lines()
            .find(|l| l.starts_with(&format!("{name} v0.1.0")))
            .unwrap_or_else(|| panic!("{name} is not in the example's tree:\n{tree}"));
        assert!(
            line.contains(&unpacked.display().to_string()),
            "{name} must come from its package, not the source tree: {line}"
        );
    }
    eprintln!(
        "packaged: {}; lock-user built and ran in {:.1} s in all: {stdout}",
        packed.join(", "),
        started.elapsed().as_secs_f64()
    );
}
