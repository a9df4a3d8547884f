//! `admin_exportChain` and `chaind export`: the canonical blocks from `first` to `last` as
//! concatenated block RLP (`RLP([header, txList])`, no header or count), gzip-compressed when
//! the file name ends with `.gz`.
//!
//! Beyond the reference, which leaves a partial file behind on failure: the blocks go to a
//! temporary file in the same directory, which is synced and then linked to its name; a link
//! fails when the name exists, so an existing file is never overwritten even by a file that
//! appeared during the export, and a failed export leaves nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use super::Chain;
use crate::types::rlp::{put_list_head, ListReader};

/// Why an export failed (the reference's texts where it has them).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("location would overwrite an existing file")]
    Exists,
    #[error("last cannot be specified without first")]
    LastWithoutFirst,
    #[error("export failed: first ({first}) is greater than last ({last})")]
    FirstAfterLast { first: u64, last: u64 },
    #[error("export failed on #{0}: not found")]
    NotFound(u64),
    #[error("{0}")]
    Io(String),
    #[error("export stopped: the node is shutting down")]
    Stopped,
    #[error(transparent)]
    Db(#[from] super::db::Error),
}

/// An I/O error as the reference words it: `<op> <path>: <error in lower case>`.
pub fn io_error(op: &str, path: &Path, e: &std::io::Error) -> String {
    let text = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::AlreadyExists => "file exists".to_string(),
        _ => {
            let t = e.to_string();
            match t.find(" (os error") {
                Some(i) => t[..i].to_lowercase(),
                None => t,
            }
        }
    };
    format!("{op} {}: {text}", path.display())
}

/// The range an export covers: `first` (default 0) to `last` (default the head).
pub fn range(first: Option<u64>, last: Option<u64>, head: u64) -> Result<(u64, u64), ExportError> {
    let (first, last) = match (first, last) {
        (None, Some(_)) => return Err(ExportError::LastWithoutFirst),
        (first, last) => (first.unwrap_or(0), last.unwrap_or(head)),
    };
    if first > last {
        return Err(ExportError::FirstAfterLast { first, last });
    }
    Ok((first, last))
}

/// Appends block `RLP([header, txList])` given the stored header RLP and body
/// (`RLP([txList])`).
pub fn block_rlp(out: &mut Vec<u8>, header: &[u8], body: &[u8]) -> Result<(), String> {
    let mut r = ListReader::whole(body).map_err(|e| e.to_string())?;
    let txs = r.raw().map_err(|e| e.to_string())?;
    put_list_head(out, header.len() + txs.len());
    out.extend_from_slice(header);
    out.extend_from_slice(txs);
    Ok(())
}

/// A temporary file next to `path` that is removed unless kept.
struct Temp {
    path: PathBuf,
    kept: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Exports blocks `first..=last` of `chain` to `path`. `progress(done, total)` is called
/// every few thousand blocks; `stop` set ends it early (nothing is left behind). Returns the
/// number of blocks written and the bytes of the file.
pub fn export(
    chain: &Chain,
    path: &Path,
    first: Option<u64>,
    last: Option<u64>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(u64, u64), ExportError> {
    if path.symlink_metadata().is_ok() {
        return Err(ExportError::Exists);
    }
    let (first, last) = range(first, last, chain.head_number())?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| ExportError::Io(format!("open {}: is a directory", path.display())))?;
    let mut random = [0u8; 6];
    getrandom::getrandom(&mut random).map_err(|e| ExportError::Io(e.to_string()))?;
    let temp = Temp {
        path: dir.join(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            hex::encode(random)
        )),
        kept: false,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp.path)
        // The reference names the file it was asked for.
        .map_err(|e| ExportError::Io(io_error("open", path, &e)))?;
    let gzip = path.to_string_lossy().ends_with(".gz");
    let mut out: Box<dyn Write> = if gzip {
        Box::new(flate2::write::GzEncoder::new(
            std::io::BufWriter::with_capacity(1 << 20, &file),
            flate2::Compression::fast(),
        ))
    } else {
        Box::new(std::io::BufWriter::with_capacity(1 << 20, &file))
    };
    let total = last - first + 1;
    let write_err = |e: std::io::Error| ExportError::Io(io_error("write", path, &e));
    let mut buf = Vec::with_capacity(1 << 16);
    let missing = chain.db.read_blocks(first, last, |number, header, body| {
        if stop.load(Ordering::Relaxed) {
            return Err(ExportError::Stopped);
        }
        buf.clear();
        block_rlp(&mut buf, header, body).map_err(|e| {
            ExportError::Db(super::db::Error::Corrupt(format!("block {number}: {e}")))
        })?;
        out.write_all(&buf).map_err(write_err)?;
        let done = number - first + 1;
        if done % 4096 == 0 {
            progress(done, total);
        }
        Ok(())
    })?;
    if let Some(n) = missing {
        return Err(ExportError::NotFound(n));
    }
    out.flush().map_err(write_err)?;
    drop(out);
    file.sync_all().map_err(write_err)?;
    let bytes = file.metadata().map_err(write_err)?.len();
    std::fs::hard_link(&temp.path, path).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => ExportError::Exists,
        _ => ExportError::Io(io_error("link", path, &e)),
    })?;
    drop(temp);
    let _ = crate::datadir::atomic::sync_dir(&dir);
    progress(total, total);
    Ok((total, bytes))
}

/// Why [`Chain::blocks_rlp`] stopped reading: full, or the database failed.
enum RangeStop {
    Full,
    Db(super::db::Error),
}

impl From<super::db::Error> for RangeStop {
    fn from(e: super::db::Error) -> RangeStop {
        RangeStop::Db(e)
    }
}

impl Chain {
    /// The RLPs of the canonical blocks from `from` on, in one read transaction: at most
    /// `max_count` of them, and no more than `max_bytes` in all, except that the first block
    /// is always given whatever its size. Fewer (or none) when the chain ends before; what a
    /// peer's `GetBlocks` is answered with. Fails only when the database does.
    pub fn blocks_rlp(
        &self,
        from: u64,
        max_count: u64,
        max_bytes: usize,
    ) -> Result<Vec<Vec<u8>>, super::ChainError> {
        let head = self.head_number();
        if max_count == 0 || from > head {
            return Ok(Vec::new());
        }
        let last = head.min(from.saturating_add(max_count - 1));
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut bytes = 0usize;
        let read = self.db.read_blocks(from, last, |number, header, body| {
            let mut b = Vec::with_capacity(header.len() + body.len() + 8);
            block_rlp(&mut b, header, body).map_err(|e| {
                RangeStop::Db(super::db::Error::Corrupt(format!("block {number}: {e}")))
            })?;
            if !out.is_empty() && bytes.saturating_add(b.len()) > max_bytes {
                return Err(RangeStop::Full);
            }
            bytes += b.len();
            out.push(b);
            Ok(())
        });
        match read {
            Ok(_) | Err(RangeStop::Full) => Ok(out),
            Err(RangeStop::Db(e)) => Err(e.into()),
        }
    }
}
