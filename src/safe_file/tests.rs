//! The file-safety rule on a temporary directory: device nodes made with
//! `mknod` and FIFOs with `mkfifo` there (never a real system path), links,
//! modes, stale temporary files and planted work directories.

use super::*;
use std::os::unix::fs::symlink;

fn mknod_null(path: &Path) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // The same device as /dev/null (1, 3), made here: writes go nowhere.
    // SAFETY: a NUL-terminated path.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if r != 0 {
        crate::test_skip::skipped("CAP_MKNOD (run as root to make a device node)");
    }
    r == 0
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_device_node_is_written_in_place_and_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    if !mknod_null(&null) {
        return;
    }
    check(&null).unwrap();
    write(&null, b"{}").unwrap();
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
    // Through a link too: the link and the device both stay.
    let link = dir.path().join("out.json");
    symlink(&null, &link).unwrap();
    write(&link, b"{}").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(names(dir.path()), ["null", "out.json"]);
}

#[test]
fn a_fifo_is_written_in_place_to_its_reader_and_refused_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let error = write(&fifo, b"x").unwrap_err();
    assert_eq!(error.to_string(), "it is a FIFO that nothing reads");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // The reader opens when it is scheduled; until then there is no reader.
    let mut tries = 0;
    while let Err(e) = write(&fifo, b"report") {
        assert_eq!(e.to_string(), "it is a FIFO that nothing reads");
        tries += 1;
        assert!(tries < 500, "the reader never opened");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(reader.join().unwrap(), b"report");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_directory_a_socket_and_a_dangling_link_are_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    assert_eq!(
        write(&sub, b"x").unwrap_err().to_string(),
        "it is a directory"
    );
    assert_eq!(check(&sub).unwrap_err().to_string(), "it is a directory");
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    assert!(write(&socket, b"x")
        .unwrap_err()
        .to_string()
        .starts_with("it is a socket"));
    let dangling = dir.path().join("dangling.json");
    symlink(dir.path().join("nowhere"), &dangling).unwrap();
    assert!(check(&dangling)
        .unwrap_err()
        .to_string()
        .starts_with("it is a symbolic link to nothing"));
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
    assert!(std::fs::symlink_metadata(&socket)
        .unwrap()
        .file_type()
        .is_socket());
    assert_eq!(names(dir.path()), ["dangling.json", "sock", "sub"]);
}

#[test]
fn a_link_to_a_file_is_followed_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    symlink(&real, &link).unwrap();
    check(&link).unwrap();
    write(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(names(dir.path()), ["link.json", "real.json"]);
}

#[test]
fn a_rewritten_file_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, "old").unwrap();
    for mode in [0o600, 0o640, 0o664] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        write(&path, b"new").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o777, mode, "{mode:o}");
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
}

#[test]
fn stale_temporary_files_of_dead_processes_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    // A process that has exited: its PID is free (reuse within this test
    // is possible in principle, but not within the microseconds it takes).
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let parent = std::os::unix::process::parent_id();
    for name in [
        format!(".r.json.{dead}.ghostbench-tmp"),
        format!(".r.json.{dead}.ghostbench-check"),
        format!(".r.json.{parent}.ghostbench-tmp"),
        format!(".other.json.{dead}.ghostbench-tmp"),
        ".r.json.x1.ghostbench-tmp".to_string(),
    ] {
        std::fs::write(dir.path().join(name), "partial").unwrap();
    }
    write(&dir.path().join("r.json"), b"whole").unwrap();
    assert_eq!(
        names(dir.path()),
        [
            format!(".other.json.{dead}.ghostbench-tmp"),
            format!(".r.json.{parent}.ghostbench-tmp"),
            ".r.json.x1.ghostbench-tmp".to_string(),
            "r.json".to_string(),
        ]
    );
}

#[test]
fn the_same_file_is_found_through_links_and_before_it_exists() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db");
    let via = dir.path().join("sub/../a.db");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    assert!(same_file(&a, &via));
    assert!(!same_file(&a, &dir.path().join("b.db")));
    std::fs::write(&a, "x").unwrap();
    let link = dir.path().join("l.db");
    symlink(&a, &link).unwrap();
    assert!(same_file(&a, &link) && same_file(&via, &link));
}

#[test]
fn private_directories_are_owner_only_and_refuse_links_and_others_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let made = private_dir(dir.path(), Path::new(".ghostbench/work/e1/B/2")).unwrap();
    assert_eq!(made, dir.path().join(".ghostbench/work/e1/B/2"));
    for sub in [".ghostbench", ".ghostbench/work", ".ghostbench/work/e1/B/2"] {
        let mode = std::fs::metadata(dir.path().join(sub)).unwrap().mode();
        assert_eq!(mode & 0o777, 0o700, "{sub}");
    }
    // Made again: the same directories, accepted.
    private_dir(dir.path(), Path::new(".ghostbench/work/e1/B/2")).unwrap();

    // A link planted where a directory of ours goes: refused, and kept.
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    symlink(&victim, dir.path().join(".ghostbench/work/e2")).unwrap();
    let error = private_dir(dir.path(), Path::new(".ghostbench/work/e2/B/2")).unwrap_err();
    assert!(
        error.to_string().ends_with(
            "e2 is a symbolic link, where ghostbench keeps a directory of its own (remove it)"
        ),
        "{error}"
    );
    assert!(names(&victim).is_empty());
    assert!(
        std::fs::symlink_metadata(dir.path().join(".ghostbench/work/e2"))
            .unwrap()
            .is_symlink()
    );

    // A directory others can write.
    let open = dir.path().join(".ghostbench/work/e3");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let error = private_dir(dir.path(), Path::new(".ghostbench/work/e3/A")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("is writable by other users (mode 777)"),
        "{error}"
    );

    // A directory of another user (only root can make one).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let theirs = dir.path().join(".ghostbench/work/e4");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let error = private_dir(dir.path(), Path::new(".ghostbench/work/e4/A")).unwrap_err();
        assert!(
            error.to_string().contains("belongs to user 65534"),
            "{error}"
        );
    }
    // Not a plain relative path.
    assert!(private_dir(dir.path(), Path::new("../x")).is_err());
}
