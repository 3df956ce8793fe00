//! The SQLite backend (bundled SQLite via `rusqlite`, so no system library):
//! one file, WAL journal so readers never block the writer, and a busy
//! timeout so concurrent writers queue instead of failing.

use super::error::StoreError;
use super::sql::{Backend, Val};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};
use std::path::Path;
use std::time::Duration;

/// Where the default store lives, relative to the working directory.
pub const DEFAULT_PATH: &str = ".ghostbench/results.db";

/// How long a writer waits for another to finish before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Sqlite {
    conn: Connection,
}

impl Sqlite {
    /// Open the store at `path`: for writing (creating it, and its directory
    /// if needed: the default `.ghostbench` owner-only), or read-only, when
    /// it must exist. A link or anything but a regular file is refused, never
    /// followed or replaced: SQLite keeps its `-wal` and `-shm` files beside
    /// the path it is given, so a link would split the database from its log.
    pub fn open(path: &Path, read_only: bool) -> Result<Sqlite, StoreError> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_symlink() => {
                return Err(StoreError::Invalid(
                    "it is a symbolic link; a store is opened only where it is (give the link's target)"
                        .into(),
                ))
            }
            Ok(meta) if !meta.is_file() => {
                return Err(StoreError::Invalid("it is not a regular file".into()))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if read_only {
                    return Err(StoreError::Invalid(
                        "there is no store here (nothing has been stored yet)".into(),
                    ));
                }
                make_dir(path)?;
            }
            Err(e) => return Err(StoreError::Io(e.to_string())),
        }
        let access = if read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        };
        let flags = access | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = Connection::open_with_flags(path, flags).map_err(sqlite)?;
        if read_only && !readable(&conn) {
            // A WAL store in a directory this user cannot write: SQLite
            // cannot make the `-shm` index it reads through, so the file is
            // read as it is on disk (its committed, checkpointed content).
            let uri = format!("file:{}?immutable=1", uri_path(path));
            conn = Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .map_err(sqlite)?;
        }
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sqlite)?;
        Ok(Sqlite { conn })
    }

    /// `PRAGMA integrity_check`'s answer: "ok" for a sound file.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
            .map_err(sqlite)
    }
}

/// The directory of a new store: the default `.ghostbench` owner-only
/// through the file-safety walk, any other as the user named it.
fn make_dir(path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    let made = if path == Path::new(DEFAULT_PATH) {
        crate::safe_file::private_dir(Path::new("."), dir).map(|_| ())
    } else {
        std::fs::create_dir_all(dir)
    };
    made.map_err(|e| StoreError::Io(e.to_string()))
}

/// Whether a read-only connection can read its database.
fn readable(conn: &Connection) -> bool {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .is_ok()
}

/// A path as the path of a `file:` URI (`%`, `?` and `#` escaped).
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

fn sqlite(e: rusqlite::Error) -> StoreError {
    // SQLite's message in one line: a statement that failed is named by its
    // first line, not pasted whole (a schema's is 45 lines).
    let text = match &e {
        rusqlite::Error::SqlInputError {
            msg, sql, offset, ..
        } => format!("{msg} (in `{}`)", statement_at(sql, *offset)),
        _ => e.to_string(),
    };
    StoreError::Database(text.replace('\n', " "))
}

/// The first line of the statement of `sql` that holds byte `offset` (the
/// first statement when the offset is unknown), at most 80 characters.
fn statement_at(sql: &str, offset: i32) -> String {
    let mut offset = usize::try_from(offset).unwrap_or(0).min(sql.len());
    while !sql.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = sql[..offset].rfind(';').map_or(0, |i| i + 1);
    let line = sql[start..]
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

impl ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Val::Int(Some(v)) => ToSqlOutput::Owned(Value::Integer(*v)),
            Val::Real(Some(v)) => ToSqlOutput::Owned(Value::Real(*v)),
            Val::Text(Some(v)) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Val::Int(None) | Val::Real(None) | Val::Text(None) => ToSqlOutput::Owned(Value::Null),
        })
    }
}

fn params(values: &[Val]) -> Vec<&dyn ToSql> {
    values.iter().map(|v| v as &dyn ToSql).collect()
}

impl Backend for Sqlite {
    fn execute(&mut self, sql: &str, values: &[Val]) -> Result<u64, StoreError> {
        let mut statement = self.conn.prepare_cached(sql).map_err(sqlite)?;
        let n = statement.execute(&params(values)[..]).map_err(sqlite)?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, values: &[Val]) -> Result<Vec<Vec<Val>>, StoreError> {
        let mut statement = self.conn.prepare_cached(sql).map_err(sqlite)?;
        let columns = statement.column_count();
        let rows = statement
            .query_map(&params(values)[..], |row| {
                (0..columns)
                    .map(|i| {
                        Ok(match row.get_ref(i)? {
                            ValueRef::Null => Val::Text(None),
                            ValueRef::Integer(v) => Val::Int(Some(v)),
                            ValueRef::Real(v) => Val::Real(Some(v)),
                            ValueRef::Text(t) | ValueRef::Blob(t) => {
                                Val::Text(Some(String::from_utf8_lossy(t).into_owned()))
                            }
                        })
                    })
                    .collect::<rusqlite::Result<Vec<Val>>>()
            })
            .map_err(sqlite)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sqlite)
    }

    fn insert(&mut self, sql: &str, values: &[Val]) -> Result<i64, StoreError> {
        self.execute(sql, values)?;
        Ok(self.conn.last_insert_rowid())
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.conn.execute_batch(sql).map_err(sqlite)
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn lock_schema(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    fn id_column(&self) -> &'static str {
        "INTEGER PRIMARY KEY AUTOINCREMENT"
    }

    fn tables_query(&self) -> &'static str {
        "SELECT name FROM sqlite_master WHERE type = 'table'"
    }

    fn setup_writes(&mut self) -> Result<(), StoreError> {
        // WAL: a reader never blocks the writer, and a killed writer's
        // half-written transaction is simply not in the log's committed part.
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(sqlite)
    }
}
