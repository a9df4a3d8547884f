//! The keystore index: what it lists, that it notices other processes' changes, and that a
//! warm listing reads no key file.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use chain_node::keystore::index::{Index, CACHE_FILE};

const ADDR_A: &str = "819104a190255e0cedbdd9d5f59a557633d79db1";
const ADDR_B: &str = "7ef5a6135f1fd6a02593eedc869c6d41d934aef8";
const ADDR_C: &str = "45dea0fb0bba44f4fcf290bba71fd57d7117cbb8";

fn key_json(addr: &str) -> String {
    // The index reads only the address; the rest need not decrypt.
    format!(r#"{{"address":"{addr}","crypto":{{}},"id":"x","version":3}}"#)
}

/// Sets the modification time of `p` to `secs_ago` seconds in the past, so that a scan of a
/// directory counts as outside the racy window without sleeping.
fn age(p: &Path, secs_ago: i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t = libc::timespec {
        tv_sec: now - secs_ago,
        tv_nsec: 0,
    };
    let times = [t, t];
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid C string and two timespecs.
    let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) };
    assert_eq!(r, 0, "utimensat failed");
}

fn addrs(idx: &Index) -> Vec<String> {
    idx.accounts().iter().map(|a| a.address.to_hex()).collect()
}

#[test]
fn lists_only_key_files_sorted_by_url() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("zzz"), key_json(ADDR_C)).unwrap();
    fs::write(
        ks.join("UTC--2016-03-22T12-57-55.920751759Z--x"),
        key_json(ADDR_B),
    )
    .unwrap();
    fs::write(ks.join("aaa"), key_json(ADDR_A)).unwrap();
    fs::write(ks.join(".hidden"), key_json(ADDR_A)).unwrap();
    fs::write(ks.join("backup~"), key_json(ADDR_A)).unwrap();
    fs::write(ks.join("empty"), "").unwrap();
    fs::write(ks.join("notjson"), "hello").unwrap();
    fs::write(ks.join("noaddr"), r#"{"version":3}"#).unwrap();
    fs::write(ks.join("numaddr"), r#"{"address":12}"#).unwrap();
    fs::write(ks.join("zeroaddr"), key_json(&"0".repeat(40))).unwrap();
    fs::create_dir(ks.join("subdir")).unwrap();
    fs::write(ks.join("subdir/inner"), key_json(ADDR_A)).unwrap();
    std::os::unix::fs::symlink(ks.join("aaa"), ks.join("link")).unwrap();
    let mut idx = Index::new(ks);
    idx.refresh();
    // Upper case sorts before lower case: byte order of the URL.
    assert_eq!(addrs(&idx), vec![ADDR_B, ADDR_A, ADDR_C]);
    let urls: Vec<String> = idx.accounts().iter().map(|a| a.url()).collect();
    assert_eq!(urls[1], format!("keystore://{}/aaa", ks.display()));
}

#[test]
fn missing_directory_is_an_empty_keystore_until_it_appears() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path().join("keystore");
    let mut idx = Index::new(&ks);
    idx.refresh();
    assert!(idx.is_empty());
    fs::create_dir(&ks).unwrap();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    idx.refresh();
    assert_eq!(addrs(&idx), vec![ADDR_A]);
}

#[test]
fn changes_by_other_processes_are_seen_on_the_next_refresh() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    fs::write(ks.join("b"), key_json(ADDR_B)).unwrap();
    age(ks, 10);
    let mut idx = Index::new(ks);
    idx.refresh();
    assert_eq!(addrs(&idx), vec![ADDR_A, ADDR_B]);
    // Added by hand, with no time passing: the directory's mtime moves, so it is seen.
    fs::write(ks.join("c"), key_json(ADDR_C)).unwrap();
    idx.refresh();
    assert!(idx.last.scanned);
    assert_eq!(idx.last.files_read, 1, "only the new file is read");
    assert_eq!(addrs(&idx), vec![ADDR_A, ADDR_B, ADDR_C]);
    fs::remove_file(ks.join("a")).unwrap();
    idx.refresh();
    assert_eq!(addrs(&idx), vec![ADDR_B, ADDR_C]);
    // A fresh index (another process) sees the same.
    let mut other = Index::new(ks);
    other.refresh();
    assert_eq!(addrs(&other), vec![ADDR_B, ADDR_C]);
}

#[test]
fn warm_listing_reads_no_key_file_in_this_or_a_new_process() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    for (i, a) in [ADDR_A, ADDR_B, ADDR_C].iter().enumerate() {
        fs::write(ks.join(format!("k{i}")), key_json(a)).unwrap();
    }
    let mut idx = Index::new(ks);
    idx.refresh();
    assert_eq!(idx.last.files_read, 3);
    // The saved index was just created, which changed the directory; once that change is
    // outside the racy window, one more scan stats (but does not read) the files...
    age(ks, 10);
    let mut second = Index::new(ks);
    second.refresh();
    assert!(second.last.scanned);
    assert_eq!(second.last.files_read, 0, "unchanged files are not re-read");
    // ...and from then on a listing is answered from the saved index without reading the
    // directory at all, in the same object and in a new one.
    second.refresh();
    assert!(!second.last.scanned);
    let mut third = Index::new(ks);
    third.refresh();
    assert!(!third.last.scanned);
    assert_eq!(third.last.files_read, 0);
    assert_eq!(addrs(&third), vec![ADDR_A, ADDR_B, ADDR_C]);
}

#[test]
fn a_scan_inside_the_racy_window_is_not_trusted() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    let mut idx = Index::new(ks);
    idx.refresh();
    // The directory changed less than a second ago, so the next refresh looks again even
    // though nothing moved: a change in the same timestamp tick would be invisible otherwise.
    idx.refresh();
    assert!(idx.last.scanned);
}

#[test]
fn a_file_changed_under_the_same_name_is_read_again_on_a_scan() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    let mut idx = Index::new(ks);
    idx.refresh();
    // Replace by rename, as every key-file writer does: a new inode under the same name.
    fs::write(ks.join(".a.new"), key_json(ADDR_B)).unwrap();
    fs::rename(ks.join(".a.new"), ks.join("a")).unwrap();
    idx.refresh();
    assert_eq!(addrs(&idx), vec![ADDR_B]);
}

#[test]
fn a_corrupt_or_truncated_saved_index_is_only_a_cache_miss() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    fs::write(ks.join("b"), key_json(ADDR_B)).unwrap();
    let mut idx = Index::new(ks);
    idx.refresh();
    age(ks, 10);
    Index::new(ks).refresh(); // saves a trusted index
    let cache = ks.join(CACHE_FILE);
    let good = fs::read(&cache).unwrap();
    for bad in [good[..good.len() / 2].to_vec(), vec![0u8; good.len()], {
        let mut f = good.clone();
        let mid = f.len() / 2;
        f[mid] ^= 0x55;
        f
    }] {
        fs::write(&cache, &bad).unwrap();
        age(ks, 10);
        let mut fresh = Index::new(ks);
        fresh.refresh();
        assert!(fresh.last.scanned, "a damaged index must not be trusted");
        assert_eq!(addrs(&fresh), vec![ADDR_A, ADDR_B]);
    }
}

#[test]
fn a_read_only_keystore_still_lists() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path().join("ro");
    fs::create_dir(&ks).unwrap();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    // A keystore we may not write to (root ignores modes, so make the cache path a directory).
    fs::create_dir(ks.join(CACHE_FILE)).unwrap();
    let mut idx = Index::new(&ks);
    idx.refresh();
    assert_eq!(addrs(&idx), vec![ADDR_A]);
}

#[test]
fn a_scan_notes_temporary_files_that_writers_must_sweep() {
    let d = tempfile::tempdir().unwrap();
    let ks = d.path();
    fs::write(ks.join("a"), key_json(ADDR_A)).unwrap();
    // Hidden files of someone else are not temporaries.
    fs::write(ks.join(".hidden"), "x").unwrap();
    let mut idx = Index::new(ks);
    idx.refresh();
    assert!(!idx.has_temporaries());
    // What a writer killed between its temporary file and the rename leaves behind.
    fs::write(ks.join(".a.tmp-123456"), "partial").unwrap();
    idx.refresh();
    assert!(idx.has_temporaries());
    assert_eq!(addrs(&idx), vec![ADDR_A]);
    // The saved index carries the finding to the next process, even when it is trusted
    // and the directory is not read again.
    age(ks, 10);
    Index::new(ks).refresh();
    let mut next = Index::new(ks);
    next.refresh();
    assert!(!next.last.scanned);
    assert!(next.has_temporaries());
    fs::remove_file(ks.join(".a.tmp-123456")).unwrap();
    next.refresh();
    assert!(next.last.scanned);
    assert!(!next.has_temporaries());
}
