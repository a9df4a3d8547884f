//! Bench key files, shared by `keystore_list.rs` and `rpc_load.rs`: copies of one real key
//! file with varied addresses and names.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chain_node::crypto::Address;
use chain_node::keystore::key_file_name;
use sha2::{Digest, Sha256};

/// A real key file written by `chain-keytool new` (passphrase `pw`, standard scrypt).
/// `compare.sh` holds the same template; keep them in step.
const TEMPLATE: &str = r#"{"address":"247f66cfb311fb9020c439c11f787b7e2265ff27","crypto":{"cipher":"aes-128-ctr","ciphertext":"82810d8067968326469e117f9af87b2a368fde6d7ba79d25caa8be968da0e52f","cipherparams":{"iv":"1672d636a4e58706d9cb065a3a1f85b2"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":262144,"p":1,"r":8,"salt":"78fda4c277497ea81f15dac5349b323893535567fdc64ce8bffd772e8a75613c"},"mac":"a000469d0e142f4aa2a0061f20a91f5965ec520d31dc725bfd509ea267c77a67"},"id":"efe7da0e-7178-49ce-8b8e-f9ad65cbbe62","version":3}"#;
const TEMPLATE_ADDRESS: &str = "247f66cfb311fb9020c439c11f787b7e2265ff27";
/// 2024-01-01T00:00:00Z; copy i is stamped i nanoseconds later.
const BASE_SECS: u64 = 1_704_067_200;

/// The time in the name of copy `i`.
pub fn stamp(i: usize) -> SystemTime {
    UNIX_EPOCH + Duration::new(BASE_SECS, i as u32)
}

/// The file name and content of copy `i` stamped `time`.
pub fn copy(i: usize, time: SystemTime) -> (String, String) {
    let address = bench_address(i);
    (
        key_file_name(time, address),
        TEMPLATE.replace(TEMPLATE_ADDRESS, &address.to_hex()),
    )
}

/// The address of copy `i`: the first 20 bytes of SHA-256(`chain-node-bench-<i>`).
pub fn bench_address(i: usize) -> Address {
    let h = Sha256::digest(format!("chain-node-bench-{i}").as_bytes());
    let mut a = [0u8; 20];
    a.copy_from_slice(&h[..20]);
    Address(a)
}

/// Writes copies `0..count` into `dir` (which must exist), each mode 0600 and named as the
/// reference names key files.
pub fn write_copies(dir: &Path, count: usize) {
    for i in 0..count {
        let (name, body) = copy(i, stamp(i));
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(dir.join(name))
            .and_then(|mut f| f.write_all(body.as_bytes()))
            .expect("write a bench key file");
    }
}
