//! The man pages and shell completions generated from the CLI definition
//! (`latlab generate`): the committed ones under `docs/man/` and
//! `completions/` are current, each page renders without a warning, each
//! shell loads its completion and completes a command and an option, and
//! `make install` puts everything under DESTDIR and PREFIX.

mod common;
use common::{latlab, require};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (the Makefile, `docs/man/`, `completions/`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files directly in `dir`, by name, with their contents.
fn files_in(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).expect("readable file");
            (name, bytes)
        })
        .collect()
}

/// Runs `latlab generate <what> <dir>` and returns what it wrote.
fn generate(what: &str, dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let output = latlab()
        .args(["generate", what])
        .arg(dir)
        .output()
        .expect("latlab runs");
    assert!(
        output.status.success(),
        "latlab generate {what}: {output:?}"
    );
    files_in(dir)
}

/// Fails, naming each file that differs and the fix, unless `committed`
/// (the repository's `dir_name`) equals what `latlab generate` writes now.
fn assert_current(
    dir_name: &str,
    committed: &BTreeMap<String, Vec<u8>>,
    fresh: &BTreeMap<String, Vec<u8>>,
) {
    let mut problems = Vec::new();
    for (name, bytes) in fresh {
        match committed.get(name) {
            None => problems.push(format!("{name} missing")),
            Some(old) if old != bytes => problems.push(format!("{name} differs")),
            Some(_) => {}
        }
    }
    for name in committed.keys().filter(|name| !fresh.contains_key(*name)) {
        problems.push(format!("{name} is no longer generated"));
    }
    assert!(
        problems.is_empty(),
        "{dir_name} is out of date with the CLI ({}): run `make cli-docs` and commit the result",
        problems.join(", ")
    );
}

/// Runs `command`, panicking with `what` when it cannot start.
fn run(command: &mut Command, what: &str) -> Output {
    command
        .output()
        .unwrap_or_else(|err| panic!("{what}: cannot run: {err}"))
}

/// True when `tool` can be started (`tool --version` runs).
fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// The subcommands `latlab --help` lists (without `help`): each has a page.
fn listed_commands() -> Vec<String> {
    let output = latlab().arg("--help").output().expect("latlab runs");
    let help = String::from_utf8(output.stdout).expect("utf-8 help");
    help.split("Commands:\n")
        .nth(1)
        .expect("the help lists commands")
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn committed_man_pages_are_current_and_one_per_command() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = generate("man", tmp.path());
    let mut expected: Vec<String> = listed_commands()
        .iter()
        .map(|name| format!("latlab-{name}.1"))
        .collect();
    expected.push("latlab.1".into());
    expected.sort();
    let names: Vec<String> = fresh.keys().cloned().collect();
    assert_eq!(names, expected, "one page per command, and latlab.1");
    assert!(
        !names.iter().any(|n| n.contains("generate")),
        "the hidden command has no page"
    );
    let committed = files_in(&repo_root().join("docs/man"));
    assert_current("docs/man", &committed, &fresh);
}

#[test]
fn committed_completions_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = generate("completions", tmp.path());
    let names: Vec<&str> = fresh.keys().map(String::as_str).collect();
    assert_eq!(names, ["_latlab", "latlab.bash", "latlab.fish"]);
    for (name, bytes) in &fresh {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.contains("lockbench"), "{name} completes the commands");
        assert!(
            !text.contains("generate"),
            "{name} leaves out the hidden command"
        );
    }
    let committed = files_in(&repo_root().join("completions"));
    assert_current("completions", &committed, &fresh);
}

/// `page` renders with groff (every warning on) and with `man -l` without a
/// warning, and the rendering names the command and shows its options.
fn assert_page_renders(page: &Path) {
    let name = page.file_stem().unwrap().to_string_lossy().into_owned();
    let groff = run(
        Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page),
        "groff",
    );
    assert!(
        groff.status.success() && groff.stderr.is_empty(),
        "groff warns about {}: {}",
        page.display(),
        String::from_utf8_lossy(&groff.stderr)
    );
    let man = run(
        Command::new("man")
            .args(["--warnings=w", "-l"])
            .arg(page)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("LANG", "C.UTF-8"),
        "man",
    );
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        man.status.success() && man.stderr.is_empty(),
        "man -l {}: {:?} {}",
        page.display(),
        man.status,
        String::from_utf8_lossy(&man.stderr)
    );
    for section in ["NAME", "SYNOPSIS", "OPTIONS"] {
        assert!(text.contains(section), "{name}: no {section} in {text}");
    }
    assert!(
        text.contains(&name),
        "{name}: the page names its command: {text}"
    );
    assert!(
        text.contains("--help"),
        "{name}: the options are listed: {text}"
    );
}

#[test]
fn every_man_page_renders_without_warnings() {
    let ok = require(
        "man pages: man and groff",
        have("man") && have("groff"),
        "install man-db (`apt-get install man-db`)",
    );
    if !ok {
        return;
    }
    let dir = repo_root().join("docs/man");
    let pages: Vec<PathBuf> = files_in(&dir).keys().map(|name| dir.join(name)).collect();
    assert!(pages.len() > 1, "pages in {}", dir.display());
    for page in &pages {
        assert_page_renders(page);
    }
    // The run page carries the command's own options and its exit statuses.
    let man = run(
        Command::new("man")
            .arg("-l")
            .arg(dir.join("latlab-run.1"))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat"),
        "man",
    );
    // Words only: man justifies lines with extra spaces where they wrap.
    let text = String::from_utf8_lossy(&man.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("--duration") && text.contains("Exit status"),
        "{text}"
    );
}

/// The bash completion of `words` (the last one being completed) that the
/// script at `script` gives, one candidate a line; also checks that sourcing
/// it registers `complete -F _latlab latlab`.
fn bash_completes(script: &Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source \"$1\" || exit 1\n\
         [[ $(complete -p latlab) == *' -F _latlab latlab' ]] || exit 2\n\
         COMP_WORDS=({line}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT={point}\n\
         _latlab latlab '{current}' '{previous}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        cword = words.len() - 1,
        point = line.len(),
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let output = run(
        Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &program, "bash"])
            .arg(script),
        "bash",
    );
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "bash with {}: {output:?}",
        script.display()
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Checks the bash completion at `script`: it loads, and completes a
/// command and an option of that command.
fn assert_bash_completion(script: &Path) {
    let commands = bash_completes(script, &["latlab", "lo"]);
    assert_eq!(commands, ["load", "lockbench"], "latlab lo<TAB>");
    let options = bash_completes(script, &["latlab", "run", "--dur"]);
    assert_eq!(options, ["--duration"], "latlab run --dur<TAB>");
}

#[test]
fn bash_completion_loads_and_completes() {
    assert_bash_completion(&repo_root().join("completions/latlab.bash"));
}

#[test]
fn zsh_completion_loads_and_registers() {
    if !require(
        "zsh completion: zsh",
        have("zsh"),
        "install zsh (`apt-get install zsh`)",
    ) {
        return;
    }
    let script = repo_root().join("completions/_latlab");
    let syntax = run(Command::new("zsh").arg("-n").arg(&script), "zsh -n");
    assert!(
        syntax.status.success() && syntax.stderr.is_empty(),
        "zsh -n: {syntax:?}"
    );
    let home = tempfile::tempdir().unwrap();
    let output = run(
        Command::new("zsh")
            .args([
                "-f",
                "-c",
                "autoload -U compinit && compinit -u -D && source \"$1\" && print -r -- $_comps[latlab]",
                "zsh",
            ])
            .arg(&script)
            .env("HOME", home.path()),
        "zsh",
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "_latlab",
        "sourcing it registers _latlab for latlab: {output:?}"
    );
}

#[test]
fn fish_completion_loads_and_completes() {
    if !require(
        "fish completion: fish",
        have("fish"),
        "install fish (`apt-get install fish`)",
    ) {
        return;
    }
    let script = repo_root().join("completions/latlab.fish");
    let home = tempfile::tempdir().unwrap();
    let output = run(
        Command::new("fish")
            .args([
                "--no-config",
                "-c",
                "source $argv[1]; and complete -C 'latlab lo'; and complete -C 'latlab run --dur'",
            ])
            .arg(&script)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env("XDG_DATA_HOME", home.path()),
        "fish",
    );
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "fish: {output:?}"
    );
    let candidates: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split('\t').next())
        .map(str::to_string)
        .collect();
    assert_eq!(
        candidates,
        ["load", "lockbench", "--duration"],
        "{output:?}"
    );
}

/// `make -C <repo> <args>` with the environment's make and install
/// settings removed, so that only the arguments decide.
fn make(args: &[&str]) -> Output {
    let mut command = Command::new("make");
    command
        .arg("--no-print-directory")
        .arg("-C")
        .arg(repo_root())
        .args(args)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .env_remove("PREFIX")
        .env_remove("DESTDIR");
    run(&mut command, "make")
}

/// Every file under `root`, relative to it, sorted.
fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// The files `make install` puts under `prefix` (relative to DESTDIR,
/// without the leading `/`), sorted.
fn installed_files(prefix: &str) -> Vec<String> {
    let mut files = vec![
        format!("{prefix}/bin/latlab"),
        format!("{prefix}/share/bash-completion/completions/latlab"),
        format!("{prefix}/share/zsh/site-functions/_latlab"),
        format!("{prefix}/share/fish/vendor_completions.d/latlab.fish"),
    ];
    for page in files_in(&repo_root().join("docs/man")).keys() {
        files.push(format!("{prefix}/share/man/man1/{page}"));
    }
    files.sort();
    files
}

#[test]
fn make_install_honours_destdir_and_prefix() {
    let binary = env!("CARGO_BIN_EXE_latlab");
    let dest = tempfile::tempdir().unwrap();
    let destdir = format!("DESTDIR={}", dest.path().display());
    let bin = format!("LATLAB_BIN={binary}");
    let output = make(&["install", &destdir, "PREFIX=/usr", &bin]);
    assert!(output.status.success(), "make install: {output:?}");

    // Exactly the expected files, all under DESTDIR/usr, none empty.
    assert_eq!(tree(dest.path()), installed_files("usr"));
    for file in installed_files("usr") {
        let meta = std::fs::metadata(dest.path().join(&file)).unwrap();
        assert!(meta.len() > 0, "{file} is empty");
    }
    let root = dest.path().join("usr");
    let installed = root.join("bin/latlab");
    assert_eq!(
        std::fs::read(&installed).unwrap(),
        std::fs::read(binary).unwrap()
    );
    let version = run(
        Command::new(&installed).arg("--version"),
        "installed latlab",
    );
    assert!(version.status.success(), "{version:?}");
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("latlab "),
        "{version:?}"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "the binary is executable");
        let page = std::fs::metadata(root.join("share/man/man1/latlab.1")).unwrap();
        assert_eq!(
            page.permissions().mode() & 0o777,
            0o644,
            "pages are plain files"
        );
    }
    assert_bash_completion(&root.join("share/bash-completion/completions/latlab"));
    if require(
        "installed man pages: man",
        have("man"),
        "install man-db (`apt-get install man-db`)",
    ) {
        assert_page_renders(&root.join("share/man/man1/latlab-run.1"));
    }

    // make uninstall removes every file it installed.
    let output = make(&["uninstall", &destdir, "PREFIX=/usr"]);
    assert!(output.status.success(), "make uninstall: {output:?}");
    assert_eq!(
        tree(dest.path()),
        Vec::<String>::new(),
        "left after uninstall"
    );

    // Without PREFIX: /usr/local.
    let dest = tempfile::tempdir().unwrap();
    let destdir = format!("DESTDIR={}", dest.path().display());
    let output = make(&["install", &destdir, &bin]);
    assert!(output.status.success(), "make install: {output:?}");
    assert_eq!(tree(dest.path()), installed_files("usr/local"));
}
