//! Unit tests of `layout::plan`: the padding objects, reused once made, and the order of the build jobs.

use super::*;

#[test]
fn padding_objects_are_assembled_once_then_reused() {
    if !crate::test_skip::require_tool("cc") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pads = make_pads(tmp.path()).unwrap();
    let sizes: Vec<u32> = pads.iter().map(|(k, _)| *k).collect();
    assert_eq!(sizes, [16, 32, 48]);
    let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    let first: Vec<_> = pads.iter().map(|(_, o)| modified(o)).collect();
    let again = make_pads(tmp.path()).unwrap();
    assert_eq!(again, pads);
    let second: Vec<_> = again.iter().map(|(_, o)| modified(o)).collect();
    assert_eq!(first, second, "the objects were assembled again");
}

#[test]
fn jobs_with_new_compile_flags_start_before_relink_only_ones() {
    // seeds 1..=5 of two builds: align 16 shuffled, shift only, align 16
    // shuffled again, align 32 shuffled, shuffle alone. Alignment words do
    // not make a compile (the launcher realigns), -ffunction-sections does.
    let cflags = [
        "-falign-functions=16 -ffunction-sections",
        "",
        "-falign-functions=16 -ffunction-sections",
        "-falign-functions=32 -ffunction-sections",
        "-ffunction-sections",
    ];
    let mut jobs = Vec::new();
    for build in 0..2 {
        for (i, flags) in cflags.iter().enumerate() {
            let values = Placeholders {
                cflags: flags.split_whitespace().map(String::from).collect(),
                ..Placeholders::for_run(PathBuf::from("/w/bench"), PathBuf::from("/w"))
            };
            jobs.push(BuildJob::new(
                build,
                i as u64 + 1,
                vec!["cc".into()],
                &values,
            ));
        }
    }
    let order: Vec<(usize, u64)> = new_compiles_first(&jobs)
        .into_iter()
        .map(|i| (jobs[i].build, jobs[i].seed))
        .collect();
    assert_eq!(
        order,
        [
            (0, 1),
            (0, 2),
            (1, 1),
            (1, 2),
            (0, 3),
            (0, 4),
            (0, 5),
            (1, 3),
            (1, 4),
            (1, 5)
        ]
    );
}
