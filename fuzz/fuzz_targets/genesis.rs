#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| chain_node_fuzz::genesis(data));
