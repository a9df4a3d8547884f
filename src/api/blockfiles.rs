//! The files and texts of the block-tracing debug methods: a block's RLP read from a file as
//! the reference reads it, standard-JSON traces written to new files in the temporary
//! directory, and a block printed as text (`debug_traceBlockFromFile`,
//! `debug_standardTraceBlockToFile`, `debug_printBlock`).

/// A file's bytes, or its error as the reference words it (`open <path>: no such file or
/// directory`, `read <path>: is a directory`).
pub(super) fn read_file(path: &std::path::Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let mut f = crate::chain::export::open_for_reading(path)?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)
        .map_err(|e| crate::chain::export::io_error("read", path, &e))?;
    Ok(out)
}

/// The bytes of the hex pairs at the start of `text`, up to the first pair that is not hex
/// (the reference's `common.Hex2Bytes`, which keeps what it decoded before an error).
pub(super) fn hex_prefix(text: &[u8]) -> Vec<u8> {
    text.chunks_exact(2)
        .map_while(|pair| {
            let digit = |c: u8| (c as char).to_digit(16);
            Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8)
        })
        .collect()
}

/// Creates a new file `<dir>/<prefix><random number>` (never an existing one; mode 0600),
/// fills it with `write` and returns its path.
pub(super) fn write_temp_file(
    dir: &std::path::Path,
    prefix: &str,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut tries = 0;
    let (file, path) = loop {
        let mut r = [0u8; 4];
        getrandom::getrandom(&mut r).map_err(std::io::Error::other)?;
        let path = dir.join(format!("{prefix}{}", u32::from_le_bytes(r)));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(f) => break (f, path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    let mut out = std::io::BufWriter::new(file);
    write(&mut out)?;
    out.flush()?;
    Ok(path.display().to_string())
}

/// A block as `debug_printBlock` prints it.
pub(super) fn print_block(b: &crate::chain::BlockRecord, total_block_score: u64) -> String {
    use std::fmt::Write;
    let h = &b.header;
    let hex0x = |x: &[u8]| format!("0x{}", hex::encode(x));
    let mut out = String::new();
    let _ = writeln!(out, "Block(#{}) hash: {}", h.number, hex0x(&b.hash));
    let mut field = |name: &str, value: String| {
        let _ = writeln!(out, "  {name}: {value}");
    };
    field("ParentHash", hex0x(&h.parent_hash));
    field("Rewardbase", hex0x(&h.rewardbase.0));
    field("Root", hex0x(&h.state_root));
    field("TxHash", hex0x(&h.transactions_root));
    field("ReceiptHash", hex0x(&h.receipts_root));
    field("Bloom", hex0x(&h.bloom[..]));
    field("BlockScore", decimal(&h.block_score));
    field("TotalBlockScore", total_block_score.to_string());
    field("Number", h.number.to_string());
    field("GasUsed", h.gas_used.to_string());
    field("Time", h.time.to_string());
    field("TimeFoS", h.time_fos.to_string());
    field("Extra", hex0x(&h.extra));
    field("Governance", hex0x(&h.governance));
    field("Vote", hex0x(&h.vote));
    if let Some(f) = &h.base_fee {
        field("BaseFee", decimal(f));
    }
    field("Size", b.size.to_string());
    let _ = writeln!(out, "Transactions: {}", b.transactions.len());
    for (i, (tx, sender)) in b.transactions.iter().enumerate() {
        let json = crate::types::json::TransactionJson::new(
            tx,
            *sender,
            crate::types::json::Location {
                block_hash: b.hash,
                block_number: h.number,
                index: i as u64,
            },
        );
        let text = serde_json::to_string(&json).expect("a transaction serializes");
        let _ = writeln!(out, "  [{i}] {text}");
    }
    out
}

/// A 256-bit value in decimal (go-ethereum's dump writes balances so).
pub(super) fn decimal(v: &[u8; 32]) -> String {
    let mut digits = Vec::new();
    let mut n = *v;
    while n.iter().any(|&b| b != 0) {
        let mut rem = 0u32;
        for b in n.iter_mut() {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
    }
    if digits.is_empty() {
        return "0".into();
    }
    digits.reverse();
    String::from_utf8(digits).expect("digits")
}
