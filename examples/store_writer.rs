//! `store_writer LOCATION COUNT RUNS`: store COUNT results of RUNS runs each
//! in the results store at LOCATION (a SQLite path or a postgresql:// URL),
//! printing `stored ID` after each commit. COUNT 0 writes until killed. The
//! store's crash and concurrency tests (tests/store.rs) run it as a writer
//! to kill or to race; benches/store.sh times it.

use ghostbench::store::record::{Command, Run, Verdict};
use ghostbench::store::{Location, Record, Store};
use std::io::Write;

fn record(i: usize, runs: usize) -> Record {
    Record {
        verb: "compare".into(),
        created_unix: 1_700_000_000 + i as i64,
        command_line: vec!["store_writer".into(), i.to_string()],
        settings: "{}".into(),
        status: Some("decided".into()),
        cpu_model: Some("test cpu".into()),
        kernel: Some("test kernel".into()),
        governor: None,
        load1: Some(0.5),
        host: Some("writer".into()),
        environment: "{}".into(),
        git: None,
        commands: vec![
            Command {
                name: "A".into(),
                template: "true".into(),
            },
            Command {
                name: "B".into(),
                template: "true".into(),
            },
        ],
        runs: (0..runs)
            .map(|r| Run {
                command: r % 2,
                name: if r % 2 == 0 { "A" } else { "B" }.into(),
                layout: None,
                round: (r / 2) as i64,
                warmup: false,
                metric: "wall".into(),
                unit: "seconds".into(),
                value: Some(0.001 * (1.0 + (r % 7) as f64)),
                exit_code: 0,
                env_pad: Some(r as i64),
            })
            .collect(),
        verdicts: vec![Verdict {
            metric: "wall".into(),
            baseline: "A".into(),
            name: "B".into(),
            verdict: "SAME".into(),
            ratio: Some(1.0),
            ci_low: Some(0.99),
            ci_high: Some(1.01),
        }],
        document: format!("{{\"writer\": {i}}}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: store_writer LOCATION COUNT RUNS");
        std::process::exit(2);
    }
    let (Ok(count), Ok(runs)) = (args[2].parse::<usize>(), args[3].parse::<usize>()) else {
        eprintln!("error: COUNT and RUNS are numbers");
        std::process::exit(2);
    };
    let mut store = match Store::open(&Location::parse(&args[1])) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let mut stdout = std::io::stdout();
    let mut i = 0;
    while count == 0 || i < count {
        match store.save(&record(i, runs)) {
            Ok(id) => {
                let _ = writeln!(stdout, "stored {id}");
                let _ = stdout.flush();
            }
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        }
        i += 1;
    }
}
