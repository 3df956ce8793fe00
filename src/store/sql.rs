//! The seam between the store's logic and its two databases: the [`Backend`]
//! trait (statements with typed parameters, rows of [`Val`]s, transactions),
//! implemented by `sqlite` and `postgres`. The store's SQL is written once,
//! with `$1, $2, …` parameters, which both databases accept.

use super::error::StoreError;

/// One SQL value, typed even when NULL (PostgreSQL checks a parameter's type
/// against its column, also for NULL).
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl Val {
    pub fn int(v: impl Into<i64>) -> Val {
        Val::Int(Some(v.into()))
    }

    pub fn text(v: impl Into<String>) -> Val {
        Val::Text(Some(v.into()))
    }

    /// A finite number, else NULL (NaN and infinities are not stored).
    pub fn real(v: Option<f64>) -> Val {
        Val::Real(v.filter(|x| x.is_finite()))
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Val::Int(v) => *v,
            Val::Real(v) => v.map(|x| x as i64),
            Val::Text(v) => v.as_deref().and_then(|t| t.parse().ok()),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(v) => v.map(|x| x as f64),
            Val::Real(v) => *v,
            Val::Text(v) => v.as_deref().and_then(|t| t.parse().ok()),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Text(v) => v.as_deref(),
            _ => None,
        }
    }

    pub fn into_string(self) -> Option<String> {
        match self {
            Val::Text(v) => v,
            Val::Int(v) => v.map(|x| x.to_string()),
            Val::Real(v) => v.map(|x| x.to_string()),
        }
    }
}

/// A database the store can write to and read from.
pub trait Backend {
    /// Run one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64, StoreError>;
    /// Run one query; its rows.
    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>, StoreError>;
    /// Run an INSERT into a table with an `id` column; the new row's id.
    fn insert(&mut self, sql: &str, params: &[Val]) -> Result<i64, StoreError>;
    /// Run several statements without parameters (the migrations).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Start a write transaction (SQLite: `BEGIN IMMEDIATE`, so two writers
    /// queue on the busy timeout instead of failing to upgrade a read lock;
    /// PostgreSQL: `BEGIN`).
    fn begin(&mut self) -> Result<(), StoreError>;
    fn commit(&mut self) -> Result<(), StoreError> {
        self.batch("COMMIT")
    }
    fn rollback(&mut self) -> Result<(), StoreError> {
        self.batch("ROLLBACK")
    }
    /// Inside a transaction: keep other processes out of the schema until it
    /// ends (PostgreSQL: an advisory lock; SQLite's `BEGIN IMMEDIATE` already does).
    fn lock_schema(&mut self) -> Result<(), StoreError>;
    /// The column type of an auto-numbered primary key.
    fn id_column(&self) -> &'static str;
    /// The query that lists the database's tables (one name per row), to
    /// tell ghostbench's own store from a foreign database.
    fn tables_query(&self) -> &'static str;
    /// Before the first write (SQLite: the WAL journal); nothing by default.
    fn setup_writes(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}
