#!/usr/bin/env python3
"""Makes keystore-extra.json: a version-1 key file (AES-128-CBC) and a role-based version-4 key
file, with pycryptodome's scrypt, AES and Keccak: an implementation independent of this crate.
Salts and IVs are fixed so that the output is reproducible."""
import json
from Crypto.Cipher import AES
from Crypto.Hash import keccak
from Crypto.Protocol.KDF import scrypt
from Crypto.Util.Padding import pad


def k256(b):
    return keccak.new(digest_bits=256, data=b).digest()


def crypto_v3(key, pw, salt, iv, n=2, r=8, p=1):
    dk = scrypt(pw.encode(), salt, 32, N=n, r=r, p=p)
    ct = AES.new(dk[:16], AES.MODE_CTR, nonce=b"", initial_value=iv).encrypt(key)
    return {"cipher": "aes-128-ctr", "ciphertext": ct.hex(), "cipherparams": {"iv": iv.hex()},
            "kdf": "scrypt", "kdfparams": {"dklen": 32, "n": n, "p": p, "r": r, "salt": salt.hex()},
            "mac": k256(dk[16:32] + ct).hex()}


def v1(key, pw, salt, iv):
    dk = scrypt(pw.encode(), salt, 32, N=2, r=8, p=1)
    ct = AES.new(k256(dk[:16])[:16], AES.MODE_CBC, iv=iv).encrypt(pad(key, 16))
    return {"cipher": "aes-128-cbc", "ciphertext": ct.hex(), "cipherparams": {"iv": iv.hex()},
            "kdf": "scrypt", "kdfparams": {"dklen": 32, "n": 2, "p": 1, "r": 8, "salt": salt.hex()},
            "mac": k256(dk[16:32] + ct).hex()}


k1 = bytes.fromhex("aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e")
k2 = bytes.fromhex("f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b")
cases = [
    {"name": "version-1-cbc", "password": "v1pass", "private_key": k1.hex(),
     "address": "0x819104a190255e0cedbdd9d5f59a557633d79db1",
     "keyfile": {"address": "819104a190255e0cedbdd9d5f59a557633d79db1",
                 "Crypto": v1(k1, "v1pass", bytes(range(32)), bytes(range(16, 32))),
                 "id": "3198bc9c-6672-5ab3-d995-4942343ae5b6", "version": "1"}},
    {"name": "version-4-role-based", "password": "rolepass", "private_key": k2.hex(),
     "address": "0x819104a190255e0cedbdd9d5f59a557633d79db1",
     "keyfile": {"address": "819104a190255e0cedbdd9d5f59a557633d79db1",
                 "keyring": [[crypto_v3(k2, "rolepass", b"\x01" * 32, b"\x02" * 16),
                              crypto_v3(k1, "rolepass", b"\x03" * 32, b"\x04" * 16)],
                             [crypto_v3(k1, "rolepass", b"\x05" * 32, b"\x06" * 16)]],
                 "id": "0d4257ed-6732-45c1-a757-353e1182380c", "version": 4}},
]
print(json.dumps({"description": __doc__.strip().replace("\n", " "), "cases": cases}, indent=1))
