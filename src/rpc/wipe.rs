//! Buffers that held requests, which carry passphrases and key data: grown and emptied
//! without leaving copies behind in memory.

use zeroize::{Zeroize, Zeroizing};

/// Makes room for `more` bytes in `buf`, wiping the old allocation rather than just
/// freeing it.
pub fn grow(buf: &mut Zeroizing<Vec<u8>>, more: usize) {
    let len = buf.len();
    let mut bigger = Zeroizing::new(Vec::with_capacity((len + more).max(2 * len)));
    bigger.extend_from_slice(buf);
    *buf = bigger;
}

/// Removes the first `n` bytes of `buf`, wiping the bytes left behind past its new end.
pub fn consume(buf: &mut Vec<u8>, n: usize) {
    let len = buf.len();
    buf.copy_within(n..len, 0);
    buf[len - n..].zeroize();
    buf.truncate(len - n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consume_wipes_what_it_leaves_behind() {
        let mut buf = b"secret-passphrase|next".to_vec();
        consume(&mut buf, 18);
        assert_eq!(buf, b"next");
        // SAFETY: reading the initialised bytes past len that consume left (still in the
        // allocation, never freed).
        let tail = unsafe { std::slice::from_raw_parts(buf.as_ptr(), 22) };
        assert!(tail[4..].iter().all(|&b| b == 0), "{tail:?}");
    }
}
