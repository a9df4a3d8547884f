#!/usr/bin/env python3
"""Writes the starting corpora of fuzz/corpus/ from the repository's own vectors and a few
hand-written inputs (run once; the fuzzers grow and `cargo fuzz cmin` trims them)."""
import hashlib, json, os, pathlib

root = pathlib.Path(__file__).resolve().parent
vectors = root.parent / "tests" / "vectors"

def put(target, data):
    d = root / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)

def hexbytes(s):
    return bytes.fromhex(s[2:] if s.startswith("0x") else s)

caver = json.load(open(vectors / "caver-transactions.json"))
for v in caver["vectors"]:
    for k in ("senderRaw", "feePayerRaw", "raw", "rawTransaction", "sigRLP"):
        if isinstance(v.get(k), str) and v[k].startswith("0x"):
            put("transaction", hexbytes(v[k]))
    args = dict(v["inputs"]); args["from"] = "0x" + "35" * 20
    put("rpc_envelope", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "fuzz_txArgs", "params": [args, v["typeInt"]]}))
txs = json.load(open(vectors / "transactions.json"))
for name, k in txs["account_keys"].items():
    put("account_key", hexbytes(k))
for t in txs["transactions"]:
    for k in ("raw", "signed", "rawTransaction"):
        if isinstance(t.get(k), str):
            put("transaction", hexbytes(t[k]))
for f in ("keystore-v3.json", "keystore-extra.json"):
    for c in json.load(open(vectors / f))["cases"]:
        if "keyfile" in c:
            put("key_file", json.dumps(c["keyfile"]))
        if "private_key" in c:
            put("keydata", c["private_key"])
            if "address" in c:
                put("keydata", c["private_key"] + "0x00" + c["address"])

call = {"from": "0x" + "35" * 20, "to": "0x" + "36" * 20, "gas": "0x5208", "gasPrice": "0x5d21dba00",
        "value": "0x1", "data": "0x70a08231", "accessList": [{"address": "0x" + "37" * 20, "storageKeys": ["0x" + "00" * 32]}]}
for body in [
    {"jsonrpc": "2.0", "id": 1, "method": "fuzz_echo", "params": ["a", 1]},
    {"jsonrpc": "2.0", "id": "x", "method": "fuzz_callArgs", "params": [call]},
    {"jsonrpc": "2.0", "id": 2, "method": "fuzz_blockNumber", "params": ["latest"]},
    {"jsonrpc": "2.0", "id": 3, "method": "fuzz_blockNumber", "params": ["0x1b4"]},
    {"jsonrpc": "2.0", "id": 4, "method": "fuzz_blockNumber", "params": [{"blockHash": "0x" + "11" * 32, "requireCanonical": True}]},
    [{"jsonrpc": "2.0", "id": 1, "method": "fuzz_echo"}, {"jsonrpc": "2.0", "method": "nope"}],
]:
    put("rpc_envelope", json.dumps(body))
put("rpc_envelope", '{"jsonrpc":"2.0","id":1,"method":"fuzz_echo","params":[[[[[[[[1]]]]]]]]}')

put("keydata", "0x" + "11" * 32)
for u in ["kni://" + "ab" * 64 + "@127.0.0.1:32323?discport=0",
          "kni://" + "ab" * 64 + "@[::1]:30303?discport=0&ntype=cn",
          "enode://" + "cd" * 64 + "@10.0.0.1:30303"]:
    put("kni_url", u)
put("kni_url", json.dumps(["kni://" + "ab" * 64 + "@127.0.0.1:32323?discport=0"]))
for line in ['chain.getBalance("0x' + "35" * 20 + '", "latest")', "personal.listAccounts",
             'chain.sendTransaction({from: "0x' + "35" * 20 + '", value: 0x10, data: "0x"})',
             "admin.nodeInfo()", "exit", "help chain", "rpc.modules()"]:
    put("console_line", line)
for cfg in ['rpc = true\nrpcport = 8551\nrpcapi = "chain,net"\n', '[Node]\nDataDir = "/tmp/x"\nHTTPPort = 1\n',
            "# comment\nws = false\nwsorigins = [\"*\"]\n"]:
    put("config_file", cfg)
for g in ['{"config": {"chainId": 1000}, "validator": "0x' + "41" * 20 + '", "alloc": {"0x' + "42" * 20 + '": {"balance": "1000000"}}}',
          '{"config": {"chainId": 1, "istanbul": {"epoch": 604800, "policy": 0}}, "timestamp": "0x5", "extraData": "0x", "alloc": {"0x' + "43" * 20 + '": {"balance": "0x10", "code": "0x6000", "storage": {"0x01": "0x02"}, "nonce": "0x1"}}}']:
    put("genesis", g)
