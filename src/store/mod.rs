//! The results store: every `compare`, `layout` and `analyze` result, kept
//! across runs (docs/store.md). One [`Store`] over a [`Backend`]: SQLite by
//! default (`.ghostbench/results.db`), or PostgreSQL for a history that many
//! runners share. The store needs no verb's types: a result is a [`Record`]
//! read out of the verb's `--json` document, which is stored whole.
//!
//! Every write is one transaction, stored whole or not at all; the schema is
//! versioned and migrated on open (`schema`), and a newer schema than this
//! binary knows is refused before anything is touched.

pub mod context;
pub mod copies;
pub mod error;
pub mod postgres;
pub mod record;
pub mod redact;
pub mod schema;
pub mod sql;
pub mod sqlite;

pub use error::StoreError;
pub use record::Record;
pub use redact::redact;
pub use sql::{Backend, Val};

use std::fmt;
use std::path::PathBuf;

pub use sqlite::DEFAULT_PATH;

/// A store's address: a SQLite file, or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `postgres://…` and `postgresql://…` are servers, anything else a file.
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgresql://") || text.starts_with("postgres://") {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }
}

impl Location {
    /// Why this is no place to keep results, if it is not: an empty path, an
    /// in-memory database, or a SQLite URI (which may name either).
    pub fn refusal(&self) -> Option<String> {
        let Location::Sqlite(path) = self else {
            return None;
        };
        let text = path.to_string_lossy();
        if text.is_empty() {
            Some("an empty path is not a store".into())
        } else if text == ":memory:" {
            Some("\":memory:\" is a database in memory, which keeps nothing".into())
        } else if text.starts_with("file:") {
            Some(format!(
                "{text:?} is a SQLite URI; give the store's file path (a URI may name a database in memory)"
            ))
        } else {
            None
        }
    }
}

/// How a store is opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Access {
    /// For reading only: the store must exist and is not changed (an older
    /// schema is the exception: it is migrated first, as for writing).
    pub read_only: bool,
    /// Accept a database with tables ghostbench did not create.
    pub foreign: bool,
}

impl fmt::Display for Location {
    /// The path, or the URL with its password hidden ([`redact`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => write!(f, "{}", redact(url)),
        }
    }
}

/// Which experiments `history` lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only experiments with a command or build of this name.
    pub name: Option<String>,
    /// Only experiments that measured this metric.
    pub metric: Option<String>,
    /// Only experiments made at or after this time.
    pub since_unix: Option<i64>,
    /// At most this many, newest first.
    pub limit: Option<usize>,
}

/// One experiment in `history`'s table.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub id: i64,
    pub verb: String,
    pub created_unix: i64,
    pub git_commit: Option<String>,
    pub git_dirty: bool,
    pub status: Option<String>,
    pub names: Vec<String>,
    pub verdicts: Vec<record::Verdict>,
}

/// A named baseline: one command's stored runs and where they were measured.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub name: String,
    pub experiment_id: i64,
    pub command: record::Command,
    pub created_unix: i64,
    pub git_commit: Option<String>,
    pub cpu_model: Option<String>,
    pub kernel: Option<String>,
    /// The measured (not warm-up) runs.
    pub runs: Vec<record::Run>,
    /// What re-running it needs, when that was kept (`copies::Rerun`, JSON).
    pub rerun: Option<String>,
}

/// One command's measured values of one metric in one experiment: a point of
/// the trend page.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    pub experiment_id: i64,
    pub created_unix: i64,
    pub git_commit: Option<String>,
    pub name: String,
    pub unit: String,
    pub values: Vec<f64>,
}

/// The results store, on either backend.
pub struct Store {
    db: Box<dyn Backend>,
    location: Location,
}

impl Store {
    /// Open the store at `location` for writing, creating and migrating its
    /// schema; a foreign database is refused.
    pub fn open(location: &Location) -> Result<Store, StoreError> {
        Store::open_as(location, Access::default())
    }

    /// Open the store at `location` as `access` says. Refused before anything
    /// is changed: an address that keeps nothing, a link or special file, a
    /// foreign database (unless `access.foreign`), a newer schema.
    pub fn open_as(location: &Location, access: Access) -> Result<Store, StoreError> {
        if let Some(why) = location.refusal() {
            return Err(StoreError::Invalid(why));
        }
        let mut db: Box<dyn Backend> = match location {
            Location::Sqlite(path) => Box::new(sqlite::Sqlite::open(path, access.read_only)?),
            Location::Postgres(url) => Box::new(postgres::Postgres::connect(url)?),
        };
        if !access.foreign {
            let foreign = schema::foreign_tables(db.as_mut())?;
            if !foreign.is_empty() {
                return Err(StoreError::Foreign(foreign));
            }
        }
        if access.read_only {
            // A database with no table at all (an empty file, a new
            // PostgreSQL database) holds no results: reading it is "nothing
            // stored", and it is left as it was, not made a store.
            let tables = db.tables_query();
            if db.query(tables, &[])?.is_empty() {
                return Err(StoreError::Empty);
            }
            // A store without its `meta` table yet is schema 0.
            let found = if !has_meta(db.as_mut())? {
                0
            } else {
                schema::current(db.as_mut())?
            };
            if found > schema::VERSION {
                return Err(StoreError::Newer {
                    found,
                    known: schema::VERSION,
                });
            }
            if found == schema::VERSION {
                return Ok(Store {
                    db,
                    location: location.clone(),
                });
            }
            // An older schema: migrated once, then read.
            drop(db);
            return Store::open_as(
                location,
                Access {
                    read_only: false,
                    ..access
                },
            );
        }
        db.setup_writes()?;
        Store::on(db, location.clone())
    }

    /// A store on an open backend, migrated to this binary's schema.
    pub fn on(mut db: Box<dyn Backend>, location: Location) -> Result<Store, StoreError> {
        schema::migrate(db.as_mut())?;
        Ok(Store { db, location })
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Run `write` in one transaction: all of it is stored, or none.
    fn transaction<T>(
        &mut self,
        write: impl FnOnce(&mut dyn Backend) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.db.begin()?;
        match write(self.db.as_mut()) {
            Ok(value) => {
                self.db.commit()?;
                Ok(value)
            }
            Err(error) => {
                let _ = self.db.rollback();
                Err(error)
            }
        }
    }

    /// Store `record` whole; its id.
    pub fn save(&mut self, record: &Record) -> Result<i64, StoreError> {
        self.transaction(|db| insert(db, record))
    }

    /// Store `record` and name its command `command` a baseline, with what
    /// re-running it needs (`copies::Rerun` as JSON) when kept, in one transaction.
    pub fn save_with_baseline(
        &mut self,
        record: &Record,
        name: &str,
        command: usize,
        rerun: Option<&str>,
    ) -> Result<i64, StoreError> {
        if command >= record.commands.len() {
            return Err(StoreError::Invalid(format!(
                "baseline {name:?}: the result has no command {command}"
            )));
        }
        self.transaction(|db| {
            let id = insert(db, record)?;
            db.execute("DELETE FROM baselines WHERE name = $1", &[Val::text(name)])?;
            db.execute(
                "INSERT INTO baselines (name, experiment_id, command_idx, saved_unix, rerun) \
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    Val::text(name),
                    Val::int(id),
                    Val::int(command as i64),
                    Val::int(record.created_unix),
                    Val::Text(rerun.map(String::from)),
                ],
            )?;
            Ok(id)
        })
    }

    /// The baseline called `name`, if there is one.
    pub fn baseline(&mut self, name: &str) -> Result<Option<Baseline>, StoreError> {
        let rows = self.db.query(
            "SELECT b.experiment_id, b.command_idx, e.created_unix, e.git_commit, e.cpu_model, \
             e.kernel, c.name, c.template, b.rerun FROM baselines b \
             JOIN experiments e ON e.id = b.experiment_id \
             JOIN commands c ON c.experiment_id = b.experiment_id AND c.idx = b.command_idx \
             WHERE b.name = $1",
            &[Val::text(name)],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let mut row = row.into_iter();
        let mut next = || row.next().unwrap_or(Val::Text(None));
        let experiment_id = next().as_i64().unwrap_or(0);
        let command_idx = next().as_i64().unwrap_or(0);
        let created_unix = next().as_i64().unwrap_or(0);
        let git_commit = next().into_string();
        let cpu_model = next().into_string();
        let kernel = next().into_string();
        let command = record::Command {
            name: next().into_string().unwrap_or_default(),
            template: next().into_string().unwrap_or_default(),
        };
        let rerun = next().into_string();
        let runs = self
            .db
            .query(
                "SELECT name, layout, round, metric, unit, value, exit_code, env_pad FROM runs \
                 WHERE experiment_id = $1 AND command_idx = $2 AND warmup = 0 \
                 ORDER BY round, metric",
                &[Val::int(experiment_id), Val::int(command_idx)],
            )?
            .into_iter()
            .map(|r| record::Run {
                command: command_idx as usize,
                name: r[0].clone().into_string().unwrap_or_default(),
                layout: r[1].as_i64(),
                round: r[2].as_i64().unwrap_or(0),
                warmup: false,
                metric: r[3].clone().into_string().unwrap_or_default(),
                unit: r[4].clone().into_string().unwrap_or_default(),
                value: r[5].as_f64(),
                exit_code: r[6].as_i64().unwrap_or(0),
                env_pad: r[7].as_i64(),
            })
            .collect();
        Ok(Some(Baseline {
            name: name.to_string(),
            experiment_id,
            command,
            created_unix,
            git_commit,
            cpu_model,
            kernel,
            runs,
            rerun,
        }))
    }

    /// The experiments `filter` lets through, newest first.
    pub fn experiments(&mut self, filter: &Filter) -> Result<Vec<Summary>, StoreError> {
        let mut sql = String::from(
            "SELECT id, verb, created_unix, git_commit, git_dirty, status FROM experiments e \
             WHERE 1 = 1",
        );
        let mut params = Vec::new();
        if let Some(name) = &filter.name {
            params.push(Val::text(name.clone()));
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM commands c WHERE c.experiment_id = e.id AND c.name = ${})",
                params.len()
            );
        }
        if let Some(metric) = &filter.metric {
            params.push(Val::text(metric.clone()));
            let n = params.len();
            sql += &format!(
                " AND (EXISTS (SELECT 1 FROM runs r WHERE r.experiment_id = e.id AND r.metric = ${n}) \
                 OR EXISTS (SELECT 1 FROM verdicts v WHERE v.experiment_id = e.id AND v.metric = ${n}))"
            );
        }
        if let Some(since) = filter.since_unix {
            params.push(Val::int(since));
            sql += &format!(" AND e.created_unix >= ${}", params.len());
        }
        sql += " ORDER BY id DESC";
        if let Some(limit) = filter.limit {
            sql += &format!(" LIMIT {limit}");
        }
        let rows = self.db.query(&sql, &params)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let id = r[0].as_i64().unwrap_or(0);
            let names = self
                .db
                .query(
                    "SELECT name FROM commands WHERE experiment_id = $1 ORDER BY idx",
                    &[Val::int(id)],
                )?
                .into_iter()
                .filter_map(|r| r.into_iter().next().and_then(Val::into_string))
                .collect();
            out.push(Summary {
                id,
                verb: r[1].clone().into_string().unwrap_or_default(),
                created_unix: r[2].as_i64().unwrap_or(0),
                git_commit: r[3].clone().into_string(),
                git_dirty: r[4].as_i64() == Some(1),
                status: r[5].clone().into_string(),
                names,
                verdicts: self.verdicts(id)?,
            });
        }
        Ok(out)
    }

    fn verdicts(&mut self, id: i64) -> Result<Vec<record::Verdict>, StoreError> {
        self.db
            .query(
                "SELECT metric, baseline, name, verdict, ratio, ci_low, ci_high FROM verdicts \
                 WHERE experiment_id = $1",
                &[Val::int(id)],
            )?
            .into_iter()
            .map(|r| {
                let verdict = r[3].clone().into_string().unwrap_or_default();
                Ok(record::Verdict {
                    metric: r[0].clone().into_string().unwrap_or_default(),
                    baseline: r[1].clone().into_string().unwrap_or_default(),
                    name: r[2].clone().into_string().unwrap_or_default(),
                    verdict: verdict.parse().map_err(|e| {
                        StoreError::Invalid(format!("result #{id}: verdicts table: {e}"))
                    })?,
                    ratio: r[4].as_f64(),
                    ci_low: r[5].as_f64(),
                    ci_high: r[6].as_f64(),
                    fragile: false,
                })
            })
            .collect()
    }

    /// The verb and the whole `--json` document of experiment `id`.
    pub fn document(&mut self, id: i64) -> Result<Option<(String, String)>, StoreError> {
        let rows = self.db.query(
            "SELECT verb, document FROM experiments WHERE id = $1",
            &[Val::int(id)],
        )?;
        Ok(rows.into_iter().next().map(|r| {
            let mut r = r.into_iter();
            let verb = r.next().and_then(Val::into_string).unwrap_or_default();
            let doc = r.next().and_then(Val::into_string).unwrap_or_default();
            (verb, doc)
        }))
    }

    /// Every command's measured values of `metric`, per experiment, oldest
    /// first; only commands called `name` when given.
    pub fn trend(
        &mut self,
        metric: &str,
        name: Option<&str>,
    ) -> Result<Vec<TrendPoint>, StoreError> {
        let mut params = vec![Val::text(metric)];
        let mut sql = String::from(
            "SELECT e.id, e.created_unix, e.git_commit, r.name, r.unit, r.value FROM runs r \
             JOIN experiments e ON e.id = r.experiment_id \
             WHERE r.metric = $1 AND r.warmup = 0 AND r.value IS NOT NULL",
        );
        if let Some(name) = name {
            params.push(Val::text(name));
            sql += " AND r.name = $2";
        }
        sql += " ORDER BY e.created_unix, e.id, r.command_idx, r.round";
        let mut points: Vec<TrendPoint> = Vec::new();
        for r in self.db.query(&sql, &params)? {
            let id = r[0].as_i64().unwrap_or(0);
            let who = r[3].clone().into_string().unwrap_or_default();
            let value = r[5].as_f64().unwrap_or(f64::NAN);
            match points
                .iter_mut()
                .find(|p| p.experiment_id == id && p.name == who)
            {
                Some(point) => point.values.push(value),
                None => points.push(TrendPoint {
                    experiment_id: id,
                    created_unix: r[1].as_i64().unwrap_or(0),
                    git_commit: r[2].clone().into_string(),
                    name: who,
                    unit: r[4].clone().into_string().unwrap_or_default(),
                    values: vec![value],
                }),
            }
        }
        Ok(points)
    }

    /// The first stored result whose document is `document`, byte for byte
    /// (by its SHA-256; documents stored before schema 3 by their text).
    pub fn find_document(&mut self, document: &str) -> Result<Option<i64>, StoreError> {
        let rows = self.db.query(
            "SELECT id FROM experiments WHERE document_sha256 = $1 \
             OR (document_sha256 IS NULL AND document = $2) ORDER BY id LIMIT 1",
            &[Val::text(sha256(document)), Val::text(document)],
        )?;
        Ok(rows.first().and_then(|r| r.first()).and_then(Val::as_i64))
    }

    /// How many experiments are stored.
    pub fn count(&mut self) -> Result<i64, StoreError> {
        let rows = self.db.query("SELECT COUNT(*) FROM experiments", &[])?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(Val::as_i64)
            .unwrap_or(0))
    }
}

/// The rows of one record, inside the caller's transaction.
fn insert(db: &mut dyn Backend, r: &Record) -> Result<i64, StoreError> {
    let git = r.git.as_ref();
    let id = db.insert(
        "INSERT INTO experiments (verb, created_unix, command_line, settings, status, cpu_model, \
         kernel, governor, load1, host, environment, git_commit, git_branch, git_dirty, document, \
         document_sha256) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        &[
            Val::text(r.verb.clone()),
            Val::int(r.created_unix),
            Val::text(serde_json::to_string(&r.command_line).unwrap_or_default()),
            Val::text(r.settings.clone()),
            Val::Text(r.status.clone()),
            Val::Text(r.cpu_model.clone()),
            Val::Text(r.kernel.clone()),
            Val::Text(r.governor.clone()),
            Val::real(r.load1),
            Val::Text(r.host.clone()),
            Val::text(r.environment.clone()),
            Val::Text(git.map(|g| g.commit.clone())),
            Val::Text(git.and_then(|g| g.branch.clone())),
            Val::Int(git.map(|g| i64::from(g.dirty))),
            Val::text(r.document.clone()),
            Val::text(sha256(&r.document)),
        ],
    )?;
    for (i, c) in r.commands.iter().enumerate() {
        db.execute(
            "INSERT INTO commands (experiment_id, idx, name, template) VALUES ($1, $2, $3, $4)",
            &[
                Val::int(id),
                Val::int(i as i64),
                Val::text(c.name.clone()),
                Val::text(c.template.clone()),
            ],
        )?;
    }
    for run in &r.runs {
        db.execute(
            "INSERT INTO runs (experiment_id, command_idx, name, layout, round, warmup, metric, \
             unit, value, exit_code, env_pad) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            &[
                Val::int(id),
                Val::int(run.command as i64),
                Val::text(run.name.clone()),
                Val::Int(run.layout),
                Val::int(run.round),
                Val::int(i64::from(run.warmup)),
                Val::text(run.metric.clone()),
                Val::text(run.unit.clone()),
                Val::real(run.value),
                Val::int(run.exit_code),
                Val::Int(run.env_pad),
            ],
        )?;
    }
    for v in &r.verdicts {
        db.execute(
            "INSERT INTO verdicts (experiment_id, metric, baseline, name, verdict, ratio, ci_low, \
             ci_high) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                Val::int(id),
                Val::text(v.metric.clone()),
                Val::text(v.baseline.clone()),
                Val::text(v.name.clone()),
                Val::text(v.verdict.to_string()),
                Val::real(v.ratio),
                Val::real(v.ci_low),
                Val::real(v.ci_high),
            ],
        )?;
    }
    Ok(id)
}

/// A document's SHA-256, in hex.
fn sha256(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(text.as_bytes()))
}

/// `bytes` in lower-case hex (SHA-256 digests: documents here, program
/// copies in `copies`).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the store has its `meta` table (a new or empty database has not).
fn has_meta(db: &mut dyn Backend) -> Result<bool, StoreError> {
    let sql = db.tables_query();
    Ok(db
        .query(sql, &[])?
        .into_iter()
        .any(|r| r.first().and_then(Val::as_str) == Some("meta")))
}
