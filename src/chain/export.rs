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
    /// A file operation failed: `<op> <path>: <why>` ([`io_error`]), `op` being `open`
    /// (creating the file), `write` or `link` (giving it its name).
    #[error("{}", io_error(op, path, source))]
    File {
        op: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(String),
    #[error("export stopped: the node is shutting down")]
    Stopped,
    #[error(transparent)]
    Db(#[from] super::db::Error),
}

/// An I/O error as the reference words it: `<op> <path>: <error in lower case>`.
/// Opens `path` for reading on behalf of a caller (an RPC method's file argument) without
/// ever blocking: a FIFO, socket or device is refused (`open <path>: not a regular file`)
/// before anything is read, since opening a FIFO for reading waits for a writer and reading
/// a device may never end. The file is opened non-blocking and its type read from the open
/// descriptor, so the check holds even if the path is replaced meanwhile. A directory opens
/// (reading it fails as the reference words it).
pub fn open_for_reading(path: &Path) -> Result<std::fs::File, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io_error("open", path, &e))?;
    let kind = file
        .metadata()
        .map_err(|e| io_error("stat", path, &e))?
        .file_type();
    if !(kind.is_file() || kind.is_dir()) {
        return Err(format!("open {}: not a regular file", path.display()));
    }
    Ok(file)
}

pub fn io_error(op: &str, path: &Path, e: &std::io::Error) -> String {
    format!("{op} {}: {}", path.display(), io_text(e))
}

/// An I/O error's text as Go's `os` package words it: lower case, no `(os error N)`.
pub fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
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
    }
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

/// Asks the kernel to start writing `file`'s dirty pages to disk now, without waiting: the
/// writing then overlaps with reading the next blocks, and the final sync has little left to
/// do (it was a quarter of an export's time). A hint: failures are ignored.
fn start_writeback(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a system call on a descriptor we own; it reads and writes no memory of ours.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// Blocks per segment of an export (read and encoded by one thread).
const SEGMENT: u64 = 2048;

/// The blocks `a..=b` as export writes them, in `buf` (emptied first: buffers go back and
/// forth between the writer and the workers, so that their pages are touched once).
fn encode_segment(
    reader: &super::db::BlockReader,
    a: u64,
    b: u64,
    stop: &AtomicBool,
    mut buf: Vec<u8>,
) -> Result<Vec<u8>, ExportError> {
    if stop.load(Ordering::Relaxed) {
        return Err(ExportError::Stopped);
    }
    buf.clear();
    let missing = reader.read(a, b, |_, block| {
        buf.extend_from_slice(block);
        Ok::<(), ExportError>(())
    })?;
    match missing {
        Some(n) => Err(ExportError::NotFound(n)),
        None => Ok(buf),
    }
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
    export_in_segments(chain, path, (first, last), stop, progress, SEGMENT)
}

/// [`export`], reading `segment` blocks at a time per thread.
fn export_in_segments(
    chain: &Chain,
    path: &Path,
    (first, last): (Option<u64>, Option<u64>),
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
    segment: u64,
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
        .map_err(|source| ExportError::File {
            op: "open",
            path: path.to_path_buf(),
            source,
        })?;
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
    let write_err = |source: std::io::Error| ExportError::File {
        op: "write",
        path: path.to_path_buf(),
        source,
    };
    // The range is cut into segments that every core reads and encodes from one shared
    // read transaction; this thread writes them in order. Reading and re-encoding the blocks
    // costs several times what writing their bytes does, so it is the part spread out.
    let reader = chain.db.block_reader()?;
    let segments = total.div_ceil(segment);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(segments as usize)
        .max(1);
    std::thread::scope(|s| -> Result<(), ExportError> {
        let mut done_rx = Vec::with_capacity(workers);
        let mut spent_tx = Vec::with_capacity(workers);
        for w in 0..workers {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>, ExportError>>(2);
            done_rx.push(rx);
            // Written buffers, back to their worker.
            let (back, spent) = std::sync::mpsc::channel::<Vec<u8>>();
            spent_tx.push(back);
            let reader = &reader;
            s.spawn(move || {
                let mut k = w as u64;
                while k < segments {
                    let a = first + k * segment;
                    let b = (a + segment - 1).min(last);
                    let buf = spent
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(2 << 20));
                    let item = encode_segment(reader, a, b, stop, buf);
                    let failed = item.is_err();
                    // A closed channel: the writer gave up; so does this worker.
                    if tx.send(item).is_err() || failed {
                        return;
                    }
                    k += workers as u64;
                }
            });
        }
        for k in 0..segments {
            let buf = done_rx[(k % workers as u64) as usize]
                .recv()
                .map_err(|_| ExportError::Io("an export thread ended early".into()))??;
            out.write_all(&buf).map_err(write_err)?;
            let _ = spent_tx[(k % workers as u64) as usize].send(buf);
            if k % 8 == 7 {
                start_writeback(&file);
            }
            let done = ((k + 1) * segment).min(total);
            progress(done, total);
        }
        Ok(())
    })?;
    out.flush().map_err(write_err)?;
    drop(out);
    file.sync_all().map_err(write_err)?;
    let bytes = file.metadata().map_err(write_err)?.len();
    std::fs::hard_link(&temp.path, path).map_err(|source| match source.kind() {
        std::io::ErrorKind::AlreadyExists => ExportError::Exists,
        _ => ExportError::File {
            op: "link",
            path: path.to_path_buf(),
            source,
        },
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
        let read = self.db.read_blocks(from, last, |_, block| {
            if !out.is_empty() && bytes.saturating_add(block.len()) > max_bytes {
                return Err(RangeStop::Full);
            }
            bytes += block.len();
            out.push(block.to_vec());
            Ok(())
        });
        match read {
            Ok(_) | Err(RangeStop::Full) => Ok(out),
            Err(RangeStop::Db(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::{Address, SecretKey};
    use crate::types::block::Block;
    use crate::types::transaction::{Transaction, ValueTransfer};

    #[test]
    fn segments_read_on_every_core_are_written_in_order() {
        let v = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(&dir.path().join("db"), &Genesis::dev(v.address(), funds)).unwrap();
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        // A block of one transfer to `to`.
        let seal_one = |nonce: u64, to: u8| {
            let mut tx = Transaction::of(ValueTransfer {
                nonce,
                gas_price: price,
                gas: 21_000,
                to: Address([to; 20]),
                value: [0; 32],
                from: v.address(),
                signatures: Vec::new(),
            });
            tx.sign(&v, chain.chain_id());
            chain.submit(tx).unwrap();
            chain.seal(&v).unwrap().unwrap();
        };
        for nonce in 0..9 {
            seal_one(nonce, 0x35);
        }
        // What the file must hold: each block encoded whole from what the chain serves.
        let want = |a: u64, b: u64| -> Vec<u8> {
            (a..=b)
                .flat_map(|n| {
                    let r = chain.block_by_number(Some(n)).unwrap().unwrap();
                    Block {
                        header: r.header,
                        transactions: r.transactions.into_iter().map(|(t, _)| t).collect(),
                    }
                    .encode()
                })
                .collect()
        };
        let stop = AtomicBool::new(false);
        for (segment, range, (a, b)) in [
            (1, (None, None), (0, 9)),
            (2, (None, None), (0, 9)),
            (3, (Some(2), Some(8)), (2, 8)),
            (4, (Some(5), None), (5, 9)),
            (100, (None, None), (0, 9)),
        ] {
            let path = dir.path().join(format!("out-{segment}.rlp"));
            let mut seen = Vec::new();
            let (blocks, bytes) = export_in_segments(
                &chain,
                &path,
                range,
                &stop,
                &mut |d, t| seen.push((d, t)),
                segment,
            )
            .unwrap();
            let file = std::fs::read(&path).unwrap();
            assert_eq!(file, want(a, b), "segment {segment}");
            assert_eq!((blocks, bytes), (b - a + 1, file.len() as u64));
            assert_eq!(seen.last(), Some(&(b - a + 1, b - a + 1)));
        }
        // Rewound to block 5 and grown again to 8 by other blocks: the old blocks 6..=9 stay
        // stored beside the new 6..=8, and only the canonical ones are exported; 9 is gone.
        chain.set_head(5).unwrap();
        for nonce in 5..8 {
            seal_one(nonce, 0x36);
        }
        assert_eq!(chain.head_number(), 8);
        for segment in [1, 3, 100] {
            let path = dir.path().join(format!("rewound-{segment}.rlp"));
            export_in_segments(&chain, &path, (None, None), &stop, &mut |_, _| {}, segment)
                .unwrap();
            assert_eq!(
                std::fs::read(&path).unwrap(),
                want(0, 8),
                "segment {segment}"
            );
        }
        let path = dir.path().join("old-nine.rlp");
        let err = export_in_segments(&chain, &path, (Some(0), Some(9)), &stop, &mut |_, _| {}, 4)
            .unwrap_err();
        assert_eq!(err.to_string(), "export failed on #9: not found");
        // A block missing from the middle of the range fails the whole export, leaving nothing.
        let path = dir.path().join("past-the-head.rlp");
        let err = export_in_segments(&chain, &path, (Some(0), Some(12)), &stop, &mut |_, _| {}, 2)
            .unwrap_err();
        assert_eq!(err.to_string(), "export failed on #9: not found");
        assert!(!path.exists());
        // Stopped (SIGINT in chaind export): no file, and no partial one either.
        let path = dir.path().join("stopped.rlp");
        let stopped = AtomicBool::new(true);
        let err = export_in_segments(&chain, &path, (None, None), &stopped, &mut |_, _| {}, 2)
            .unwrap_err();
        assert!(matches!(err, ExportError::Stopped), "{err}");
        assert!(!path.exists());
        let temps = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count();
        assert_eq!(temps, 0, "no temporary file is left behind");
    }
}
