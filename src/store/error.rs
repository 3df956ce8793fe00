//! The store's one error type: why the store could not be used, one line
//! each (the SQL backends' messages, I/O, a newer schema).

/// Why the store could not be used; one line each.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Database(String),
    #[error("{0}")]
    Io(String),
    #[error(
        "the store has schema version {found}, newer than the {known} this ghostbench knows; \
         use a newer ghostbench (nothing was changed)"
    )]
    Newer { found: i64, known: i64 },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "it is a database with tables ghostbench did not create ({}); give another store, \
         or --store-foreign to add ghostbench's tables beside them (nothing was changed)",
        .0.join(", ")
    )]
    Foreign(Vec<String>),
    /// A database with no table at all, opened to read: nothing stored yet.
    #[error("there is no store here (an empty database: nothing has been stored yet)")]
    Empty,
}
