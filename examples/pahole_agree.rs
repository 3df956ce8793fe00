//! `pahole_agree PAHOLE_OUTPUT GHOSTBENCH_JSON`: how many structs pahole printed agree
//! with ghostbench's layouts (size, member offsets and sizes, holes), differ, are pahole
//! errors, or are missing from ghostbench. Used by benches/structs.sh.

#[path = "../tests/common/pahole.rs"]
mod pahole;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: pahole_agree PAHOLE_OUTPUT GHOSTBENCH_JSON");
        std::process::exit(2);
    }
    let text = match std::fs::read(&args[1]) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(e) => {
            eprintln!("error: {}: {e}", args[1]);
            std::process::exit(1);
        }
    };
    let report: serde_json::Value = match std::fs::read(&args[2])
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {}: {e}", args[2]);
            std::process::exit(1);
        }
    };
    let parsed = pahole::parse(&text);
    let ours = report["structs"].as_array().cloned().unwrap_or_default();
    let result = pahole::compare(&parsed, &ours);
    println!(
        "pahole structs: {}  agree: {}  differ: {}  pahole errors: {}  missing in ghostbench: {}",
        parsed.len(),
        result.agree,
        result.differ.len(),
        result.pahole_errors.len(),
        result.missing.len()
    );
    for (p, ours) in result.differ.iter().take(10) {
        if let Some(o) = ours.first() {
            println!("differ: {}: {}", p.name, pahole::first_difference(p, o));
        }
    }
    for name in result.missing.iter().take(10) {
        println!("missing: {name}");
    }
}
