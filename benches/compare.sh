#!/usr/bin/env bash
# Reference figures on this machine to compare the criterion benches against:
#   (i)   OpenSSL's scrypt (through Python's hashlib) with the standard parameters, against
#         `cargo bench --bench crypto -- scrypt/standard`;
#   (ii)  `find DIR -type f -exec cat {} + > /dev/null` over the 100k keystore: the cost of
#         opening and reading every key file once, against the cold listing;
#   (iii) `chain-keytool --keystore DIR list > /dev/null`, cold (saved index deleted) and warm
#         (saved index present and trusted), plus the process start-up of the binary alone.
# Runs (ii) and (iii) three times each; the first run of each follows
# `sync; echo 3 > /proc/sys/vm/drop_caches` when that is permitted (it says when it is not).
#
# Usage: benches/compare.sh [KEYSTORE_DIR]   (default: target/bench-keystore-100k)
# The keystore is made when it does not hold exactly 100,000 key files, identical (names and
# bytes) to the one benches/keystore_list.rs makes. chain-keytool is built with
# `cargo build --release` first (a no-op when it is up to date); set CHAIN_KEYTOOL to time
# another binary instead.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/target/bench-keystore-100k}
dir=$(realpath -m "$dir")
count=100000
index="$dir/.chain-keystore-index"

if [[ -z ${CHAIN_KEYTOOL:-} ]]; then
    (cd "$root" && cargo build --release --quiet --bin chain-keytool) || { echo "cargo build failed" >&2; exit 1; }
    exe=$root/target/release/chain-keytool
else
    exe=$CHAIN_KEYTOOL
fi

key_files() { find "$1" -maxdepth 1 -type f -name 'UTC--*' 2>/dev/null | wc -l; }

# Same layout as ensure_keystore in benches/keystore_list.rs: file i is named
# UTC--2024-01-01T00-00-00.<i, 9 digits>Z--<address>, address = first 20 bytes of
# SHA-256("chain-node-bench-<i>"), content = one real v3 key file with that address.
make_keystore() {
    echo "making a keystore of $count key files in $dir ..."
    python3 - "$dir" "$count" <<'EOF'
import hashlib, os, shutil, sys, time
target, count = sys.argv[1], int(sys.argv[2])
template = '{"address":"247f66cfb311fb9020c439c11f787b7e2265ff27","crypto":{"cipher":"aes-128-ctr","ciphertext":"82810d8067968326469e117f9af87b2a368fde6d7ba79d25caa8be968da0e52f","cipherparams":{"iv":"1672d636a4e58706d9cb065a3a1f85b2"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":262144,"p":1,"r":8,"salt":"78fda4c277497ea81f15dac5349b323893535567fdc64ce8bffd772e8a75613c"},"mac":"a000469d0e142f4aa2a0061f20a91f5965ec520d31dc725bfd509ea267c77a67"},"id":"efe7da0e-7178-49ce-8b8e-f9ad65cbbe62","version":3}'
template_address = "247f66cfb311fb9020c439c11f787b7e2265ff27"
t0 = time.monotonic()
partial = target + ".partial"
shutil.rmtree(partial, ignore_errors=True)
os.makedirs(partial)
for i in range(count):
    addr = hashlib.sha256(b"chain-node-bench-%d" % i).digest()[:20].hex()
    name = "UTC--2024-01-01T00-00-00.%09dZ--%s" % (i, addr)
    with open(os.path.join(partial, name), "w") as f:
        f.write(template.replace(template_address, addr))
if os.path.exists(target):
    shutil.rmtree(target)
os.rename(partial, target)
print("made in %.1f s" % (time.monotonic() - t0))
EOF
}

if [[ $(key_files "$dir") -ne $count ]]; then
    make_keystore || { echo "could not make the keystore" >&2; exit 1; }
fi

drop_caches() {
    sync
    if (echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null; then
        echo "    (page cache dropped before the next run)"
    else
        echo "    (could not drop the page cache: writing /proc/sys/vm/drop_caches is not permitted here; the first run is NOT cold)"
    fi
}

# Wall time in seconds (ms resolution) of "$@" with its output discarded; fails loudly.
timed() {
    local TIMEFORMAT='%3R' out
    out=$( { time "$@" >/dev/null 2>/tmp/compare-sh-stderr.$$; } 2>&1 ) || {
        echo "FAILED: $* :" >&2
        cat /tmp/compare-sh-stderr.$$ >&2
        rm -f /tmp/compare-sh-stderr.$$
        exit 1
    }
    rm -f /tmp/compare-sh-stderr.$$
    echo "$out"
}

list() { "$exe" --keystore "$dir" list; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "keystore: $dir ($(key_files "$dir") key files)"
echo "binary:   $exe"
echo

echo "(i) scrypt N=2^18 r=8 p=1 dkLen=32, OpenSSL via Python hashlib"
python3 - <<'EOF'
import hashlib, statistics, timeit
f = lambda: hashlib.scrypt(b"p", salt=b"s" * 32, n=262144, r=8, p=1, maxmem=2**30, dklen=32)
runs = timeit.repeat(f, number=1, repeat=5)
print("    in one process, 5 runs: " + " ".join("%.3f" % r for r in runs)
      + " s; min %.3f, median %.3f" % (min(runs), statistics.median(runs)))
EOF
cmd=(python3 -c 'import hashlib; hashlib.scrypt(b"p", salt=b"s"*32, n=262144, r=8, p=1, maxmem=2**30, dklen=32)')
whole=()
for _ in 1 2 3 4 5; do whole+=("$(timed "${cmd[@]}")"); done
echo "    whole command (with interpreter start-up), 5 runs: ${whole[*]} s"
echo

echo "(ii) find DIR -type f -exec cat {} + > /dev/null   ($count files; saved index removed first)"
rm -f "$index"
for run in 1 2 3; do
    [[ $run -eq 1 ]] && drop_caches
    echo "    run $run: $(timed find "$dir" -type f -exec cat {} +) s"
done
echo

echo "(iii) $exe --keystore DIR list > /dev/null"
echo "  cold (saved index deleted before each run; every key file is read):"
for run in 1 2 3; do
    rm -f "$index"
    [[ $run -eq 1 ]] && drop_caches
    echo "    run $run: $(timed list) s"
done

# Warm: the saved index must be stamped with a directory mtime more than RACY_WINDOW (1 s)
# older than the scan that saved it. Wait, list once so it is saved trusted, and repeat if the
# listing itself changed the directory (it does when it creates the saved index).
for _ in 1 2 3 4 5; do
    sleep 1.2
    before=$(stat -c %y "$dir")
    list >/dev/null || exit 1
    [[ $(stat -c %y "$dir") == "$before" ]] && break
done
lines=$(list | wc -l)
[[ $lines -eq $count ]] || { echo "list printed $lines lines, expected $count" >&2; exit 1; }
echo "  warm (saved index present and trusted; $lines accounts listed):"
for run in 1 2 3; do
    [[ $run -eq 1 ]] && drop_caches
    echo "    run $run: $(timed list) s"
done
echo "  process start-up alone ($exe --version):"
for run in 1 2 3; do
    echo "    run $run: $(timed "$exe" --version) s"
done
