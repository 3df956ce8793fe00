//! The store's schema and its migrations (docs/store.md). The version lives
//! in `meta.schema_version`; opening a store applies the migrations it lacks,
//! each in the transaction that opens it, and refuses a store whose version is
//! newer than this binary knows, before touching anything.

use super::error::StoreError;
use super::sql::{Backend, Val};

/// The schema this binary writes.
pub const VERSION: i64 = 4;

/// Migration `i` takes the schema from version `i` to `i + 1`. `{id}` is the
/// backend's auto-numbered key type. Types are the ones both databases
/// share: BIGINT, DOUBLE PRECISION, TEXT.
const MIGRATIONS: [&str; VERSION as usize] = [
    // 0 → 1: experiments, their commands, runs and verdicts.
    "CREATE TABLE experiments (
        id {id},
        verb TEXT NOT NULL,
        created_unix BIGINT NOT NULL,
        command_line TEXT NOT NULL,
        settings TEXT NOT NULL,
        status TEXT,
        cpu_model TEXT,
        kernel TEXT,
        governor TEXT,
        load1 DOUBLE PRECISION,
        host TEXT,
        environment TEXT NOT NULL,
        git_commit TEXT,
        git_branch TEXT,
        git_dirty BIGINT,
        document TEXT NOT NULL
    );
    CREATE TABLE commands (
        experiment_id BIGINT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        idx BIGINT NOT NULL,
        name TEXT NOT NULL,
        template TEXT NOT NULL,
        PRIMARY KEY (experiment_id, idx)
    );
    CREATE TABLE runs (
        experiment_id BIGINT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        command_idx BIGINT NOT NULL,
        name TEXT NOT NULL,
        layout BIGINT,
        round BIGINT NOT NULL,
        warmup BIGINT NOT NULL,
        metric TEXT NOT NULL,
        unit TEXT NOT NULL,
        value DOUBLE PRECISION,
        exit_code BIGINT NOT NULL,
        env_pad BIGINT
    );
    CREATE TABLE verdicts (
        experiment_id BIGINT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        metric TEXT NOT NULL,
        baseline TEXT NOT NULL,
        name TEXT NOT NULL,
        verdict TEXT NOT NULL,
        ratio DOUBLE PRECISION,
        ci_low DOUBLE PRECISION,
        ci_high DOUBLE PRECISION
    );",
    // 1 → 2: named baselines, and the indexes `history` reads by.
    "CREATE TABLE baselines (
        name TEXT PRIMARY KEY,
        experiment_id BIGINT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        command_idx BIGINT NOT NULL,
        saved_unix BIGINT NOT NULL
    );
    CREATE INDEX runs_by_experiment ON runs (experiment_id, metric);
    CREATE INDEX verdicts_by_experiment ON verdicts (experiment_id);
    CREATE INDEX experiments_by_time ON experiments (created_unix);",
    // 2 → 3: what re-running a baseline needs (`copies::Rerun`, JSON).
    "ALTER TABLE baselines ADD COLUMN rerun TEXT;",
    // 3 → 4: each document's SHA-256, so `history import` stores a document once.
    "ALTER TABLE experiments ADD COLUMN document_sha256 TEXT;
    CREATE INDEX experiments_by_document ON experiments (document_sha256);",
];

/// The tables ghostbench creates; any other table makes a database foreign
/// (SQLite's own `sqlite_*` tables aside).
pub const TABLES: &[&str] = &[
    "meta",
    "experiments",
    "commands",
    "runs",
    "verdicts",
    "baselines",
];

/// The tables in `db` that ghostbench did not create, sorted.
pub fn foreign_tables(db: &mut dyn Backend) -> Result<Vec<String>, StoreError> {
    let sql = db.tables_query();
    let mut foreign: Vec<String> = db
        .query(sql, &[])?
        .into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Val::into_string))
        .filter(|t| !TABLES.contains(&t.as_str()) && !t.starts_with("sqlite_"))
        .collect();
    foreign.sort();
    Ok(foreign)
}

/// Bring the schema to [`VERSION`], or refuse a newer one. Runs in its own
/// transaction, with the schema locked against other processes.
pub fn migrate(db: &mut dyn Backend) -> Result<i64, StoreError> {
    migrate_to(db, VERSION)
}

/// As [`migrate`], up to `target` (tests build older stores with it).
pub fn migrate_to(db: &mut dyn Backend, target: i64) -> Result<i64, StoreError> {
    db.begin()?;
    let result = (|| {
        db.lock_schema()?;
        db.batch("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")?;
        let found = current(db)?;
        if found > VERSION {
            return Err(StoreError::Newer {
                found,
                known: VERSION,
            });
        }
        let id = db.id_column();
        for (from, sql) in MIGRATIONS.iter().enumerate().take(target as usize) {
            if (from as i64) < found {
                continue;
            }
            db.batch(&sql.replace("{id}", id))?;
        }
        let now = found.max(target);
        db.execute("DELETE FROM meta WHERE key = 'schema_version'", &[])?;
        db.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', $1)",
            &[Val::text(now.to_string())],
        )?;
        Ok(now)
    })();
    match result {
        Ok(v) => {
            db.commit()?;
            Ok(v)
        }
        Err(e) => {
            let _ = db.rollback();
            Err(e)
        }
    }
}

/// The schema version recorded in `meta`, 0 for an empty store.
pub fn current(db: &mut dyn Backend) -> Result<i64, StoreError> {
    let rows = db.query("SELECT value FROM meta WHERE key = 'schema_version'", &[])?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(|v| v.as_i64())
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::Sqlite;
    use crate::store::{Filter, Location, Store};

    #[test]
    fn an_older_store_is_migrated_and_keeps_its_results() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let mut db = Sqlite::open(&path, false).unwrap();
        assert_eq!(migrate_to(&mut db, 1).unwrap(), 1);
        db.execute(
            "INSERT INTO experiments (verb, created_unix, command_line, settings, environment, \
             document) VALUES ('compare', 5, '[]', '{}', '{}', '{\"old\": true}')",
            &[],
        )
        .unwrap();
        drop(db);
        let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
        let mut db = Sqlite::open(&path, false).unwrap();
        assert_eq!(current(&mut db).unwrap(), VERSION);
        let listed = store.experiments(&Filter::default()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            store.document(listed[0].id).unwrap().unwrap().1,
            "{\"old\": true}"
        );
        // Version 2's table is there.
        assert_eq!(store.baseline("main").unwrap().map(|b| b.name), None);
    }

    #[test]
    fn a_newer_store_is_refused_before_anything_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let mut db = Sqlite::open(&path, false).unwrap();
        migrate(&mut db).unwrap();
        db.execute(
            "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
            &[Val::text((VERSION + 1).to_string())],
        )
        .unwrap();
        let error = migrate(&mut db).unwrap_err();
        assert!(
            matches!(error, StoreError::Newer { found, known } if found == VERSION + 1 && known == VERSION)
        );
        assert!(!error.to_string().contains('\n'));
        assert_eq!(current(&mut db).unwrap(), VERSION + 1);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(dir.path().join("s.db"));
        let mut store = Store::open(&location).unwrap();
        let record = crate::store::Record {
            verb: "compare".into(),
            created_unix: 1,
            command_line: Vec::new(),
            settings: "{}".into(),
            status: None,
            cpu_model: None,
            kernel: None,
            governor: None,
            load1: None,
            host: None,
            environment: "{}".into(),
            git: None,
            commands: vec![crate::store::record::Command {
                name: "A".into(),
                template: "true".into(),
            }],
            runs: Vec::new(),
            verdicts: Vec::new(),
            document: "{}".into(),
        };
        // Command 3 does not exist: the baseline is refused, nothing is stored.
        assert!(store.save_with_baseline(&record, "b", 3, None).is_err());
        // Two commands with one index: the second insert fails inside the
        // transaction, and the experiment row goes with it.
        let mut twice = record.clone();
        twice.commands.push(twice.commands[0].clone());
        let mut broken = Sqlite::open(&dir.path().join("s.db"), false).unwrap();
        broken
            .batch("CREATE UNIQUE INDEX one_name ON commands (experiment_id, name)")
            .unwrap();
        assert!(store.save(&twice).is_err());
        assert_eq!(store.count().unwrap(), 0);
        assert!(store.save(&record).is_ok());
        assert_eq!(store.count().unwrap(), 1);
    }
}
