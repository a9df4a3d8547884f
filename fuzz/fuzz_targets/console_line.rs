#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| chain_node_fuzz::console_line(data));
