//! The PostgreSQL backend (the `postgres` crate, no TLS): the same schema
//! and statements as SQLite, for a history many runners and machines share.

use super::error::StoreError;
use super::sql::{Backend, Val};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};

/// Any number: all the store's migrations take this advisory lock, so two
/// processes opening a new server do not create the tables twice.
const SCHEMA_LOCK: i64 = 0x6768_6f73_7462;

pub struct Postgres {
    client: Client,
}

impl Postgres {
    /// Connect to `url` (`postgresql://user@host:port/db`, or with a socket
    /// directory as the percent-encoded host).
    pub fn connect(url: &str) -> Result<Postgres, StoreError> {
        let client = Client::connect(url, NoTls).map_err(pg)?;
        Ok(Postgres { client })
    }
}

fn pg(e: postgres::Error) -> StoreError {
    // The server's own message (with its code, detail and hint) when there
    // is one; else the client's words and every cause under them ("error
    // connecting to server: Connection refused (os error 111)"), in one line,
    // a password in them hidden.
    let text = match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({} {})", db.message(), db.severity(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(&format!("; {detail}"));
            }
            if let Some(hint) = db.hint() {
                text.push_str(&format!("; hint: {hint}"));
            }
            text
        }
        None => {
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                let words = c.to_string();
                if !text.contains(&words) {
                    text.push_str(": ");
                    text.push_str(&words);
                }
                cause = c.source();
            }
            text
        }
    };
    StoreError::Database(super::redact(&text.replace('\n', " ")).into_owned())
}

/// Typed parameters: a NULL carries its column's Rust type.
fn boxed(values: &[Val]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync> {
            match v {
                Val::Int(x) => Box::new(*x),
                Val::Real(x) => Box::new(*x),
                Val::Text(x) => Box::new(x.clone()),
            }
        })
        .collect()
}

fn refs(values: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|b| b.as_ref()).collect()
}

impl Backend for Postgres {
    fn execute(&mut self, sql: &str, values: &[Val]) -> Result<u64, StoreError> {
        let owned = boxed(values);
        self.client.execute(sql, &refs(&owned)).map_err(pg)
    }

    fn query(&mut self, sql: &str, values: &[Val]) -> Result<Vec<Vec<Val>>, StoreError> {
        let owned = boxed(values);
        let rows = self.client.query(sql, &refs(&owned)).map_err(pg)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let ty = row.columns()[i].type_().clone();
                        Ok(if ty == Type::INT8 {
                            Val::Int(row.try_get::<_, Option<i64>>(i).map_err(pg)?)
                        } else if ty == Type::INT4 {
                            Val::Int(row.try_get::<_, Option<i32>>(i).map_err(pg)?.map(i64::from))
                        } else if ty == Type::FLOAT8 {
                            Val::Real(row.try_get::<_, Option<f64>>(i).map_err(pg)?)
                        } else {
                            Val::Text(row.try_get::<_, Option<String>>(i).map_err(pg)?)
                        })
                    })
                    .collect()
            })
            .collect()
    }

    fn insert(&mut self, sql: &str, values: &[Val]) -> Result<i64, StoreError> {
        let owned = boxed(values);
        let row = self
            .client
            .query_one(&format!("{sql} RETURNING id"), &refs(&owned))
            .map_err(pg)?;
        row.try_get::<_, i64>(0).map_err(pg)
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(pg)
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        self.batch("BEGIN")
    }

    fn lock_schema(&mut self) -> Result<(), StoreError> {
        self.client
            .execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .map(|_| ())
            .map_err(pg)
    }

    fn id_column(&self) -> &'static str {
        "BIGSERIAL PRIMARY KEY"
    }

    fn tables_query(&self) -> &'static str {
        "SELECT table_name::TEXT FROM information_schema.tables \
         WHERE table_schema = current_schema()"
    }
}
