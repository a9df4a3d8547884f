//! The chain database's redb file, opened again after an I/O error.
//!
//! redb refuses every transaction after a write failed (`Previous I/O error occurred. Please
//! close and re-open the database.`): a full disk made the node stop sealing for good, even
//! once space came back. [`Reopening`] hands out transactions of the open file and, when one
//! fails that way, drops the file and opens it again (redb repairs it from its last commit,
//! which the failed one never replaced) before trying once more. Readers still holding the old
//! file keep it open until they finish; the new open waits for them (at most
//! [`REOPEN_WAIT`]).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use redb::{Database, ReadTransaction, StorageError, TransactionError, WriteTransaction};

use super::store_error::{Error, Result};

/// How long a reopen waits for the readers of the old file to finish.
pub const REOPEN_WAIT: Duration = Duration::from_secs(5);

pub struct Reopening {
    path: PathBuf,
    /// `None` between a failed reopen and the next try.
    db: RwLock<Option<Arc<Database>>>,
}

/// Whether `e` is redb's refusal after an earlier I/O error (or the I/O error itself).
fn needs_reopen(e: &TransactionError) -> bool {
    matches!(
        e,
        TransactionError::Storage(StorageError::PreviousIo | StorageError::Io(_))
    )
}

impl Reopening {
    pub fn new(path: PathBuf, db: Database) -> Reopening {
        Reopening {
            path,
            db: RwLock::new(Some(Arc::new(db))),
        }
    }

    /// The open file, opening it again if an earlier reopen failed.
    fn current(&self) -> Result<Arc<Database>> {
        if let Some(db) = self.db.read().unwrap_or_else(|p| p.into_inner()).as_ref() {
            return Ok(db.clone());
        }
        self.reopen(None)
    }

    /// Drops the file that failed (`failed`: its address, when it is still the open one) and
    /// opens it again.
    fn reopen(&self, failed: Option<*const Database>) -> Result<Arc<Database>> {
        let mut slot = self.db.write().unwrap_or_else(|p| p.into_inner());
        match (slot.as_ref(), failed) {
            // Another thread reopened it already.
            (Some(now), Some(f)) if !std::ptr::eq(Arc::as_ptr(now), f) => return Ok(now.clone()),
            (Some(now), None) => return Ok(now.clone()),
            _ => {}
        }
        *slot = None;
        let shown = self.path.display().to_string();
        crate::log::warn(
            "The chain database had an I/O error; opening it again",
            &[("path", &shown)],
        );
        let deadline = Instant::now() + REOPEN_WAIT;
        loop {
            match Database::create(&self.path) {
                Ok(db) => {
                    let db = Arc::new(db);
                    *slot = Some(db.clone());
                    crate::log::info("The chain database is open again", &[("path", &shown)]);
                    return Ok(db);
                }
                // The old file is still held by readers that have not finished.
                Err(redb::DatabaseError::DatabaseAlreadyOpen) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(source) => {
                    return Err(Error::Open {
                        path: shown,
                        source,
                    })
                }
            }
        }
    }

    /// `begin` on the open file; after an I/O error, on the file opened again.
    fn begin<T>(
        &self,
        begin: impl Fn(&Database) -> std::result::Result<T, TransactionError>,
    ) -> Result<T> {
        let db = self.current()?;
        match begin(&db) {
            Err(e) if needs_reopen(&e) => {
                // Our own handle must go too, or the file stays open.
                let failed = Arc::as_ptr(&db);
                drop(db);
                let db = self.reopen(Some(failed))?;
                Ok(begin(&db)?)
            }
            r => Ok(r?),
        }
    }

    pub fn begin_read(&self) -> Result<ReadTransaction> {
        self.begin(Database::begin_read)
    }

    pub fn begin_write(&self) -> Result<WriteTransaction> {
        self.begin(Database::begin_write)
    }
}
