//! The fuzz targets' committed corpora (`fuzz/corpus/<target>/`: what the fuzzers found and
//! kept, and each finding's input) replayed through the same target bodies the fuzzers run
//! (`fuzz/src/lib.rs`), on the stable toolchain and without a fuzzing engine: a decoder that
//! panics again on an input once fixed fails here. `fuzz/README.md` says how to fuzz.

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;

#[test]
fn every_corpus_input_runs_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus");
    for (name, target) in targets::TARGETS {
        let dir = root.join(name);
        let mut inputs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "no corpus for {name}");
        for input in &inputs {
            let data = match std::fs::read(input) {
                Ok(d) => d,
                // A fuzzer running on the corpus replaced it meanwhile.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => panic!("{}: {e}", input.display()),
            };
            if let Err(e) = std::panic::catch_unwind(|| target(&data)) {
                panic!("{name}: {} panicked: {e:?}", input.display());
            }
        }
        eprintln!("{name}: {} inputs", inputs.len());
    }
}
