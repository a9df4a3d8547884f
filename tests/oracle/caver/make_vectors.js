#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Independent-signer oracle: caver-js 1.12.2 builds and signs contract
// transactions (Klaytn's TxTypeSmartContractDeploy and
// TxTypeSmartContractExecution, and legacy deploy/call) and writes their bytes
// to tests/vectors/contract-transactions.json, for the node's own encoder,
// signer and hasher to be checked against.
//
// Fully offline: no provider is set, and every field that caver would
// otherwise ask a node for (chainId, gasPrice, nonce) is given. Signing is
// deterministic (RFC 6979), so a rerun writes the same file.
//
// Usage: node make_vectors.js [path to node_modules/caver-js]
// (see README.md beside this file for the install step).
'use strict';

const fs = require('fs');
const path = require('path');

const caverPath = process.argv[2] ? path.resolve(process.argv[2]) : 'caver-js';
const Caver = require(caverPath);
const caver = new Caver(); // no provider: nothing here may reach the network

const CAVER_VERSION = require(`${caverPath}/package.json`).version;
if (CAVER_VERSION !== '1.12.2') throw new Error(`expected caver-js 1.12.2, got ${CAVER_VERSION}`);

const repo = path.resolve(__dirname, '..', '..', '..');
const readContract = (name) => JSON.parse(fs.readFileSync(path.join(repo, 'tests', 'contracts', 'out', `${name}.json`), 'utf8'));

const K1 = '0x' + '46'.repeat(32);
const K1_ADDRESS = '0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f';
const TO = '0x' + '35'.repeat(20);
const RECIPIENT = '0x' + '11'.repeat(20);
const GAS_PRICE = 25000000000n;
const GAS = 1000000;

const keyring = caver.wallet.keyring.createFromPrivateKey(K1);
if (keyring.address.toLowerCase() !== K1_ADDRESS) throw new Error(`K1 address is ${keyring.address}`);

// Inputs from Part A's compiled contracts.
const counter = readContract('Counter');
const token = readContract('Token');
const COUNTER_BYTECODE = counter.bytecode; // Counter's constructor takes no arguments
const transferAbi = token.abi.find((e) => e.type === 'function' && e.name === 'transfer');
const TRANSFER_CALLDATA = caver.abi.encodeFunctionCall(transferAbi, [RECIPIENT, 1000]);
if (TRANSFER_CALLDATA.slice(2, 10) !== token.methodIdentifiers['transfer(address,uint256)'])
    throw new Error('transfer selector differs from solc');

const hex = (n) => '0x' + BigInt(n).toString(16);

const KIND = {
    smartContractDeploy: caver.transaction.smartContractDeploy,
    smartContractExecution: caver.transaction.smartContractExecution,
    legacy: caver.transaction.legacyTransaction,
};

// Builds, signs and checks one transaction; returns its record.
async function record(name, kind, fields) {
    const { chainId, nonce, gas, gasPrice, to, value, input } = fields;
    const obj = { nonce: hex(nonce), gasPrice: hex(gasPrice), gas: hex(gas), value: hex(value), input, chainId: hex(chainId) };
    if (kind !== 'legacy') obj.from = K1_ADDRESS;
    if (to !== null) obj.to = to;
    if (kind === 'smartContractDeploy') {
        obj.humanReadable = false;
        obj.codeFormat = 0; // CODE_FORMAT.EVM
    }
    const tx = KIND[kind].create(obj);
    await tx.sign(keyring);

    const sigRLP = tx.getRLPEncodingForSignature();
    const sigHash = caver.utils.sha3(sigRLP);
    const raw = tx.getRLPEncoding();
    if (tx.getRawTransaction() !== raw) throw new Error(`${name}: rawTransaction differs from getRLPEncoding`);
    const txHash = tx.getTransactionHash();
    const senderTxHash = tx.getSenderTxHash();
    const sig = Array.isArray(tx.signatures) ? tx.signatures : [tx.signatures];
    if (sig.length !== 1) throw new Error(`${name}: expected one signature`);

    // Cross-checks within caver: the hash it signed is keccak(sigRLP), the
    // signature recovers K1, and decoding the raw bytes gives them back.
    const signer = caver.utils.publicKeyToAddress(caver.utils.recoverPublicKey(sigHash, sig[0], true));
    if (signer.toLowerCase() !== K1_ADDRESS) throw new Error(`${name}: signature does not recover K1`);
    const recovered = tx.recoverPublicKeys().map((k) => caver.utils.publicKeyToAddress(k).toLowerCase());
    if (recovered.length !== 1 || recovered[0] !== K1_ADDRESS) throw new Error(`${name}: recoverPublicKeys does not give K1`);
    const decoded = caver.transaction.decode(raw);
    if (decoded.getRLPEncoding() !== raw || decoded.type !== tx.type) throw new Error(`${name}: decode/encode round trip differs`);

    const inputs = { chainId, nonce, gasPrice: hex(gasPrice), gas };
    if (kind !== 'legacy') inputs.from = K1_ADDRESS;
    inputs.to = to;
    inputs.value = hex(value);
    inputs.input = input;
    if (kind === 'smartContractDeploy') {
        inputs.humanReadable = false;
        inputs.codeFormat = 0;
    }

    return {
        name,
        type: tx.type,
        typeTag: caver.transaction.tag[tx.type] === '' ? null : caver.transaction.tag[tx.type],
        caverMethod: `caver.transaction.${kind === 'legacy' ? 'legacyTransaction' : kind}`,
        inputs,
        sigRLP,
        sigHash,
        v: Number(BigInt(sig[0].v)),
        r: sig[0].r,
        s: sig[0].s,
        raw,
        txHash,
        senderTxHash,
    };
}

// The known legacy vector (value transfer, empty input) that every run must
// reproduce before anything is written.
const CHECK_RAW =
    '0xf86e808505d21dba00825208943535353535353535353535353535353535353535880de0b6b3a7640000808207f6a0c951862b11ecf1f966801cf5699c9a3a2adbf24378a6732deb05734e49dbb20da006b122b4fa0804e407a8f3cfb38a8d9a22b318c9e9174bce100df927d8ac6cbb';

async function main() {
    const records = [];
    const base = { gasPrice: GAS_PRICE, gas: GAS };

    for (const chainId of [1000, 1001]) {
        const c = { ...base, chainId, nonce: 0 };
        records.push(await record(`smart contract deploy Counter, chain ${chainId}, nonce 0`, 'smartContractDeploy',
            { ...c, to: null, value: 0, input: COUNTER_BYTECODE }));
        records.push(await record(`smart contract deploy Counter with value 1 peb, chain ${chainId}, nonce 0`, 'smartContractDeploy',
            { ...c, to: null, value: 1, input: COUNTER_BYTECODE }));
        records.push(await record(`smart contract execution Token.transfer, chain ${chainId}, nonce 0`, 'smartContractExecution',
            { ...c, to: TO, value: 0, input: TRANSFER_CALLDATA }));
        records.push(await record(`legacy deploy Counter, chain ${chainId}, nonce 0`, 'legacy',
            { ...c, to: null, value: 0, input: COUNTER_BYTECODE }));
        records.push(await record(`legacy call Token.transfer, chain ${chainId}, nonce 0`, 'legacy',
            { ...c, to: TO, value: 0, input: TRANSFER_CALLDATA }));
    }
    records.push(await record('smart contract deploy Counter, chain 1001, nonce 7', 'smartContractDeploy',
        { ...base, chainId: 1001, nonce: 7, to: null, value: 0, input: COUNTER_BYTECODE }));

    const check = await record('check: known legacy value transfer, chain 1001, nonce 0', 'legacy',
        { chainId: 1001, nonce: 0, gasPrice: GAS_PRICE, gas: 21000, to: TO, value: 10n ** 18n, input: '0x' });
    if (check.raw !== CHECK_RAW) throw new Error(`the known legacy vector is not reproduced: ${check.raw}`);

    const doc = {
        description:
            'Contract transactions built and signed by caver-js (an independent signer), offline, with key K1. ' +
            'Regenerate with tests/oracle/caver/make_vectors.js (see tests/oracle/caver/README.md). ' +
            'chainId, nonce and gas are decimal numbers; gasPrice and value are 0x-hex quantities; to, input and all byte strings are 0x-hex; ' +
            'to is null for deploys (empty in the RLP). sigRLP is the signing pre-image (getRLPEncodingForSignature) and sigHash its keccak256; ' +
            'raw is getRLPEncoding (the rawTransaction: type tag then RLP for Klaytn types); txHash is keccak256(raw); ' +
            'senderTxHash equals txHash for these non-fee-delegated types. v is a number (chainId*2+35+recovery); r and s are 32-byte hex as caver gives them. ' +
            'No contract address is given: caver-js has no helper that computes it. ' +
            'The deploys with value 1 peb are signing vectors only: Counter\'s constructor is not payable, so running one would revert.',
        generator: { tool: 'caver-js', version: CAVER_VERSION, script: 'tests/oracle/caver/make_vectors.js' },
        key: { K1, address: K1_ADDRESS },
        contracts: {
            Counter: { from: 'tests/contracts/out/Counter.json', solc: counter.solc, evmVersion: counter.evmVersion, bytecode: COUNTER_BYTECODE },
            transferCall: {
                from: 'tests/contracts/out/Token.json',
                call: `transfer(${RECIPIENT}, 1000)`,
                calldata: TRANSFER_CALLDATA,
            },
        },
        transactions: records,
        check,
    };
    const out = path.join(repo, 'tests', 'vectors', 'contract-transactions.json');
    fs.writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
    console.log(`${path.relative(process.cwd(), out)}: ${records.length} transactions and the check record (reproduced)`);
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
