#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Independent test vectors for every Klaytn transaction type that caver-js
// 1.12.2 can build, written as JSON to stdout:
//
//     cd tests/oracle/caver && npm ci && node generate.js > vectors.json
//
// Fully offline: no provider is set, and every field caver would otherwise ask
// a node for (chainId, nonce, gasPrice / maxFeePerGas / maxPriorityFeePerGas)
// is given. caver-js signs deterministically (RFC 6979), so a rerun prints the
// same bytes. The script checks itself before printing (known transaction
// hashes, signer recovery, decode/encode round trips) and exits non-zero on
// any mismatch, printing nothing to stdout.
'use strict';

const Caver = require('caver-js');
const caver = new Caver(); // no provider: nothing here may reach the network

const CAVER_VERSION = require('caver-js/package.json').version;
if (CAVER_VERSION !== '1.12.2') throw new Error(`expected caver-js 1.12.2, got ${CAVER_VERSION}`);

const keyring = caver.wallet.keyring;
const K1 = '0x' + '46'.repeat(32);
const K2 = '0x' + '47'.repeat(32);
const K3 = '0x' + '48'.repeat(32);
const KR1 = keyring.createFromPrivateKey(K1);
const KR2 = keyring.createFromPrivateKey(K2);
const KR3 = keyring.createFromPrivateKey(K3);
const A1 = KR1.address.toLowerCase();
const A2 = KR2.address.toLowerCase();
const A3 = KR3.address.toLowerCase();
if (A1 !== '0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f') throw new Error(`K1 address is ${A1}`);

const RECIPIENT = '0x' + '35'.repeat(20);
const CONTRACT = '0x72665d3e94cb4f374b7728f1ab21a3115c4d50eb';
const CALLDATA = '0xb3f98adc0000000000000000000000000000000000000000000000000000000000000001';
const DEPLOY_CODE = '0x600a600c600039600a6000f3602a60005260206000f3';
const MEMO = '0x68656c6c6f'; // "hello"
const GAS_PRICE = 25000000000n;
const ONE_KLAY = 10n ** 18n;
const ACCESS_LIST = [
    {
        address: CONTRACT,
        storageKeys: [
            '0x0000000000000000000000000000000000000000000000000000000000000000',
            '0x0000000000000000000000000000000000000000000000000000000000000001',
        ],
    },
];

const hex = (n) => '0x' + BigInt(n).toString(16);
const keccak = (h) => caver.utils.sha3(h).toLowerCase();
const lower = (s) => {
    if (typeof s !== 'string' || !/^0x[0-9a-fA-F]*$/.test(s)) throw new Error(`not a hex string: ${s}`);
    return s.toLowerCase();
};
const sigList = (sigs) => (Array.isArray(sigs) ? sigs : [sigs]).map((s) => [lower(s.v), lower(s.r), lower(s.s)]);
const typeInt = (tx) => (tx.type === 'TxTypeLegacyTransaction' ? 0 : parseInt(caver.transaction.tag[tx.type], 16));

// Account keys for the AccountUpdate types (the account is always K1's).
const PUB1 = KR1.getPublicKey();
const PUB2 = KR2.getPublicKey();
const PUB3 = KR3.getPublicKey();
const ACCOUNT_KEYS = {
    legacy: { desc: 'AccountKeyLegacy', make: () => caver.account.createWithAccountKeyLegacy(A1) },
    publicK3: { desc: 'AccountKeyPublic(K3)', make: () => caver.account.createWithAccountKeyPublic(A1, PUB3) },
    fail: { desc: 'AccountKeyFail', make: () => caver.account.createWithAccountKeyFail(A1) },
    multisig: {
        desc: 'AccountKeyWeightedMultiSig(threshold 2; K1 weight 1, K3 weight 1)',
        make: () => caver.account.createWithAccountKeyWeightedMultiSig(A1, [PUB1, PUB3], { threshold: 2, weights: [1, 1] }),
    },
    roleBased: {
        desc: 'AccountKeyRoleBased([AccountKeyPublic(K1), AccountKeyPublic(K2), AccountKeyPublic(K3)])',
        make: () => caver.account.createWithAccountKeyRoleBased(A1, [[PUB1], [PUB2], [PUB3]]),
    },
};

// Which input fields each caver constructor takes (besides nonce, gas, chainId, from).
const FIELDS = {
    legacyTransaction: ['gasPrice', 'to', 'value', 'input'],
    valueTransfer: ['gasPrice', 'to', 'value'],
    valueTransferMemo: ['gasPrice', 'to', 'value', 'input'],
    accountUpdate: ['gasPrice', 'key'],
    smartContractDeploy: ['gasPrice', 'to', 'value', 'input', 'humanReadable', 'codeFormat'],
    smartContractExecution: ['gasPrice', 'to', 'value', 'input'],
    cancel: ['gasPrice'],
    chainDataAnchoring: ['gasPrice', 'input'],
    ethereumAccessList: ['gasPrice', 'to', 'value', 'input', 'accessList'],
    ethereumDynamicFee: ['maxFeePerGas', 'maxPriorityFeePerGas', 'to', 'value', 'input', 'accessList'],
};
const baseKind = (kind) => {
    const b = kind.replace(/^feeDelegated/, '').replace(/WithRatio$/, '');
    return b.charAt(0).toLowerCase() + b.slice(1);
};

// Builds the caver input object and the recorded copy of it.
function makeInputs(kind, v) {
    const fd = kind.startsWith('feeDelegated');
    const ratio = kind.endsWith('WithRatio');
    const fields = FIELDS[baseKind(kind)];
    const given = { nonce: hex(v.nonce), gas: hex(v.gas) };
    if (kind !== 'legacyTransaction') given.from = A1;
    const recorded = { ...given };
    let account = null;
    for (const f of fields) {
        switch (f) {
            case 'gasPrice':
                given.gasPrice = recorded.gasPrice = hex(v.gasPrice === undefined ? GAS_PRICE : v.gasPrice);
                break;
            case 'maxFeePerGas':
            case 'maxPriorityFeePerGas':
                given[f] = recorded[f] = hex(GAS_PRICE);
                break;
            case 'to':
                if (v.to !== null) given.to = v.to;
                recorded.to = v.to; // null: contract creation (no `to` given to caver)
                break;
            case 'value':
                given.value = recorded.value = hex(v.value);
                break;
            case 'input':
                given.input = recorded.input = v.input;
                break;
            case 'humanReadable':
                given.humanReadable = recorded.humanReadable = false;
                break;
            case 'codeFormat':
                given.codeFormat = recorded.codeFormat = 0; // CODE_FORMAT.EVM
                break;
            case 'accessList':
                given.accessList = recorded.accessList = ACCESS_LIST;
                break;
            case 'key':
                account = ACCOUNT_KEYS[v.key].make();
                given.account = account;
                recorded.keyType = ACCOUNT_KEYS[v.key].desc;
                recorded.key = lower(account.getRLPEncodingAccountKey());
                break;
            default:
                throw new Error(f);
        }
    }
    if (ratio) given.feeRatio = recorded.feeRatio = hex(v.feeRatio);
    if (fd) recorded.feePayer = A2; // given to caver by signAsFeePayer(K2)
    given.chainId = hex(v.chainId);
    return { given, recorded };
}

const addrsOf = (privateKeys) => privateKeys.map((k) => keyring.createFromPrivateKey(k).address.toLowerCase());
const recoverAddrs = (keys) => keys.map((k) => caver.utils.publicKeyToAddress(k).toLowerCase());

// Builds, signs (sender: `senderKeyring`; fee payer: `feePayerKeyring`), checks and records one transaction.
// `senderKeys` / `feePayerKeys`: private keys signing for K1's / K2's address.
async function build(name, kind, v, senderKeys = [K1], feePayerKeys = [K2]) {
    const fd = kind.startsWith('feeDelegated');
    const senderKeyring = senderKeys.length === 1 ? keyring.createFromPrivateKey(senderKeys[0]) : keyring.createWithMultipleKey(A1, senderKeys);
    const feePayerKeyring = feePayerKeys.length === 1 ? keyring.createFromPrivateKey(feePayerKeys[0]) : keyring.createWithMultipleKey(A2, feePayerKeys);
    const { given, recorded } = makeInputs(kind, v);
    const tx = caver.transaction[kind].create(given);
    await tx.sign(senderKeyring);

    const rec = { name, type: tx.type, typeInt: typeInt(tx), chainId: v.chainId, inputs: recorded };
    rec.sigRLP = lower(tx.getRLPEncodingForSignature());
    rec.sigHash = keccak(rec.sigRLP);
    rec.senderRaw = lower(tx.getRLPEncoding());
    if (fd && tx.feePayer !== '0x' + '00'.repeat(20)) throw new Error(`${name}: unsigned feePayer is ${tx.feePayer}`);
    const senderTxHashBefore = lower(tx.getSenderTxHash());
    if (fd) {
        await tx.signAsFeePayer(feePayerKeyring);
        if (tx.feePayer !== A2) throw new Error(`${name}: feePayer is ${tx.feePayer}`);
        rec.feePayerSigRLP = lower(tx.getRLPEncodingForFeePayerSignature());
        rec.feePayerSigHash = keccak(rec.feePayerSigRLP);
    }
    rec.raw = lower(tx.getRLPEncoding());
    rec.txHash = lower(tx.getTransactionHash());
    rec.senderTxHash = lower(tx.getSenderTxHash());
    rec.signatures = sigList(tx.signatures);
    if (fd) rec.feePayerSignatures = sigList(tx.feePayerSignatures);
    const decoded = caver.transaction.decode(rec.raw);
    rec.decoded = lower(decoded.getRLPEncoding());

    // Self-checks.
    const fail = (m) => {
        throw new Error(`${name}: ${m}`);
    };
    if (rec.decoded !== rec.raw) fail('decode/encode round trip differs');
    if (decoded.type !== tx.type) fail('decoded type differs');
    if (lower(tx.getRawTransaction()) !== rec.raw) fail('getRawTransaction differs from getRLPEncoding');
    if (senderTxHashBefore !== rec.senderTxHash) fail('senderTxHash changed when the fee payer signed');
    if (!fd && rec.senderRaw !== rec.raw) fail('senderRaw differs from raw for a non-fee-delegated type');
    if (rec.txHash !== keccak(rec.typeInt >= 0x7801 ? '0x' + rec.raw.slice(4) : rec.raw)) fail('txHash is not keccak256(raw)');
    const senders = recoverAddrs(tx.recoverPublicKeys());
    if (JSON.stringify(senders) !== JSON.stringify(addrsOf(senderKeys))) fail(`sender signatures recover ${senders}`);
    for (const s of tx.signatures.length ? tx.signatures : [tx.signatures]) {
        const a = caver.utils.publicKeyToAddress(caver.utils.recoverPublicKey(rec.sigHash, s, true)).toLowerCase();
        if (!senders.includes(a)) fail('a signature does not recover from sigHash');
    }
    if (fd) {
        const payers = recoverAddrs(tx.recoverFeePayerPublicKeys());
        if (JSON.stringify(payers) !== JSON.stringify(addrsOf(feePayerKeys))) fail(`fee payer signatures recover ${payers}, want ${want}`);
        for (const s of tx.feePayerSignatures) {
            const a = caver.utils.publicKeyToAddress(caver.utils.recoverPublicKey(rec.feePayerSigHash, s, true)).toLowerCase();
            if (!payers.includes(a)) fail('a fee payer signature does not recover from feePayerSigHash');
        }
    }
    return rec;
}

// Known values from public Klaytn/caver test material: each must be reproduced.
const KNOWN = {
    'ValueTransfer known vector': '0xc3eb5eb7331fbe84949eb43a13ca677dbd7bf90099bbcae9877871297b12ae75',
    'SmartContractDeploy known vector': '0x88e5fea7121cf6c180afb9ccb1c9685fb8c911de10c00a7a9b2d0bb9356faa51',
};
const KNOWN_LEGACY_RAW =
    '0xf86e808505d21dba00825208943535353535353535353535353535353535353535880de0b6b3a7640000808207f6a0c951862b11ecf1f966801cf5699c9a3a2adbf24378a6732deb05734e49dbb20da006b122b4fa0804e407a8f3cfb38a8d9a22b318c9e9174bce100df927d8ac6cbb';

// [name, caver constructor, fields]. Defaults: gasPrice 25000000000.
const T = RECIPIENT;
const SPECS = [
    ['Legacy known vector (value transfer)', 'legacyTransaction', { chainId: 1001, nonce: 0, gas: 21000, to: T, value: ONE_KLAY, input: '0x' }],
    ['Legacy value transfer', 'legacyTransaction', { chainId: 1000, nonce: 7, gas: 100000, to: T, value: 1, input: '0x' }],
    ['Legacy contract call, value 0', 'legacyTransaction', { chainId: 1001, nonce: 1234, gas: 300000, to: CONTRACT, value: 0, input: CALLDATA }],
    ['Legacy contract creation', 'legacyTransaction', { chainId: 1000, nonce: 1, gas: 300000, to: null, value: 0, input: DEPLOY_CODE }],

    ['ValueTransfer known vector', 'valueTransfer', { chainId: 1001, nonce: 0, gas: 21000, to: T, value: ONE_KLAY }],
    ['ValueTransfer', 'valueTransfer', { chainId: 1000, nonce: 7, gas: 100000, to: T, value: 1 }],
    ['ValueTransfer, value 0', 'valueTransfer', { chainId: 1001, nonce: 1234, gas: 100000, to: T, value: 0 }],
    ['FeeDelegatedValueTransfer', 'feeDelegatedValueTransfer', { chainId: 1001, nonce: 1, gas: 100000, to: T, value: ONE_KLAY }],
    ['FeeDelegatedValueTransfer', 'feeDelegatedValueTransfer', { chainId: 1000, nonce: 0, gas: 100000, to: T, value: 1 }],
    ['FeeDelegatedValueTransferWithRatio 30', 'feeDelegatedValueTransferWithRatio', { chainId: 1001, nonce: 7, gas: 100000, to: T, value: ONE_KLAY, feeRatio: 30 }],
    ['FeeDelegatedValueTransferWithRatio 99', 'feeDelegatedValueTransferWithRatio', { chainId: 1000, nonce: 1234, gas: 300000, to: T, value: 1, feeRatio: 99 }],

    ['ValueTransferMemo', 'valueTransferMemo', { chainId: 1001, nonce: 0, gas: 100000, to: T, value: ONE_KLAY, input: MEMO }],
    ['ValueTransferMemo, empty memo', 'valueTransferMemo', { chainId: 1000, nonce: 7, gas: 100000, to: T, value: 1, input: '0x' }],
    ['FeeDelegatedValueTransferMemo', 'feeDelegatedValueTransferMemo', { chainId: 1001, nonce: 1, gas: 100000, to: T, value: ONE_KLAY, input: CALLDATA }],
    ['FeeDelegatedValueTransferMemoWithRatio 30', 'feeDelegatedValueTransferMemoWithRatio', { chainId: 1000, nonce: 1234, gas: 300000, to: T, value: 1, input: MEMO, feeRatio: 30 }],

    ['AccountUpdate to AccountKeyLegacy', 'accountUpdate', { chainId: 1001, nonce: 0, gas: 100000, key: 'legacy' }],
    ['AccountUpdate to AccountKeyPublic(K3)', 'accountUpdate', { chainId: 1000, nonce: 1, gas: 100000, key: 'publicK3' }],
    ['AccountUpdate to AccountKeyFail', 'accountUpdate', { chainId: 1001, nonce: 7, gas: 100000, key: 'fail' }],
    ['AccountUpdate to weighted multisig K1+K3', 'accountUpdate', { chainId: 1001, nonce: 1234, gas: 300000, key: 'multisig' }],
    ['AccountUpdate to role-based [K1, K2, K3]', 'accountUpdate', { chainId: 1000, nonce: 0, gas: 300000, key: 'roleBased' }],
    ['FeeDelegatedAccountUpdate to AccountKeyPublic(K3)', 'feeDelegatedAccountUpdate', { chainId: 1001, nonce: 1, gas: 100000, key: 'publicK3' }],
    ['FeeDelegatedAccountUpdate to role-based [K1, K2, K3]', 'feeDelegatedAccountUpdate', { chainId: 1000, nonce: 7, gas: 300000, key: 'roleBased' }],
    ['FeeDelegatedAccountUpdateWithRatio 30 to weighted multisig K1+K3', 'feeDelegatedAccountUpdateWithRatio', { chainId: 1001, nonce: 0, gas: 300000, key: 'multisig', feeRatio: 30 }],
    ['FeeDelegatedAccountUpdateWithRatio 99 to AccountKeyLegacy', 'feeDelegatedAccountUpdateWithRatio', { chainId: 1000, nonce: 1234, gas: 100000, key: 'legacy', feeRatio: 99 }],

    ['SmartContractDeploy known vector', 'smartContractDeploy', { chainId: 1001, nonce: 0, gas: 200000, to: null, value: 0, input: DEPLOY_CODE }],
    ['SmartContractDeploy, value 1', 'smartContractDeploy', { chainId: 1000, nonce: 1234, gas: 300000, to: null, value: 1, input: DEPLOY_CODE }],
    ['FeeDelegatedSmartContractDeploy', 'feeDelegatedSmartContractDeploy', { chainId: 1001, nonce: 1, gas: 300000, to: null, value: 0, input: DEPLOY_CODE }],
    ['FeeDelegatedSmartContractDeployWithRatio 30', 'feeDelegatedSmartContractDeployWithRatio', { chainId: 1000, nonce: 7, gas: 300000, to: null, value: 0, input: DEPLOY_CODE, feeRatio: 30 }],

    ['SmartContractExecution, value 0', 'smartContractExecution', { chainId: 1001, nonce: 0, gas: 100000, to: CONTRACT, value: 0, input: CALLDATA }],
    ['SmartContractExecution, value 1', 'smartContractExecution', { chainId: 1000, nonce: 7, gas: 300000, to: CONTRACT, value: 1, input: CALLDATA }],
    ['FeeDelegatedSmartContractExecution', 'feeDelegatedSmartContractExecution', { chainId: 1001, nonce: 1234, gas: 100000, to: CONTRACT, value: 0, input: CALLDATA }],
    ['FeeDelegatedSmartContractExecutionWithRatio 30', 'feeDelegatedSmartContractExecutionWithRatio', { chainId: 1001, nonce: 1, gas: 300000, to: CONTRACT, value: 0, input: CALLDATA, feeRatio: 30 }],

    ['Cancel', 'cancel', { chainId: 1001, nonce: 0, gas: 100000 }],
    ['Cancel', 'cancel', { chainId: 1000, nonce: 1234, gas: 100000 }],
    ['FeeDelegatedCancel', 'feeDelegatedCancel', { chainId: 1001, nonce: 7, gas: 100000 }],
    ['FeeDelegatedCancelWithRatio 30', 'feeDelegatedCancelWithRatio', { chainId: 1000, nonce: 1, gas: 300000, feeRatio: 30 }],

    ['ChainDataAnchoring, arbitrary payload', 'chainDataAnchoring', { chainId: 1001, nonce: 0, gas: 100000, input: CALLDATA }],
    ['FeeDelegatedChainDataAnchoring, arbitrary payload', 'feeDelegatedChainDataAnchoring', { chainId: 1000, nonce: 7, gas: 100000, input: CALLDATA }],
    ['FeeDelegatedChainDataAnchoringWithRatio 99, arbitrary payload', 'feeDelegatedChainDataAnchoringWithRatio', { chainId: 1001, nonce: 1234, gas: 300000, input: CALLDATA, feeRatio: 99 }],

    ['EthereumAccessList value transfer', 'ethereumAccessList', { chainId: 1001, nonce: 0, gas: 100000, to: T, value: ONE_KLAY, input: '0x' }],
    ['EthereumAccessList contract call, value 0', 'ethereumAccessList', { chainId: 1000, nonce: 1234, gas: 300000, to: CONTRACT, value: 0, input: CALLDATA }],
    ['EthereumDynamicFee value transfer', 'ethereumDynamicFee', { chainId: 1001, nonce: 7, gas: 100000, to: T, value: ONE_KLAY, input: '0x' }],
    ['EthereumDynamicFee contract call, value 1', 'ethereumDynamicFee', { chainId: 1000, nonce: 1, gas: 300000, to: CONTRACT, value: 1, input: CALLDATA }],
];

async function main() {
    const vectors = [];
    for (const [name, kind, v] of SPECS) {
        const rec = await build(`${name}, chain ${v.chainId}, nonce ${v.nonce}`, kind, v);
        rec.name = `${name}, chain ${v.chainId}, nonce ${v.nonce}`;
        if (KNOWN[name] !== undefined && rec.txHash !== KNOWN[name]) throw new Error(`${name}: txHash ${rec.txHash}, known ${KNOWN[name]}`);
        if (name.startsWith('Legacy known') && rec.raw !== KNOWN_LEGACY_RAW) throw new Error(`${name}: raw ${rec.raw}`);
        vectors.push(rec);
    }
    vectors.sort((a, b) => a.typeInt - b.typeInt); // stable: definition order within a type

    // Every transaction class caver offers has a vector.
    for (const kind of Object.keys(caver.transaction)) {
        if (caver.transaction[kind] && typeof caver.transaction[kind].create === 'function' && !SPECS.some((s) => s[1] === kind))
            throw new Error(`no vector for caver.transaction.${kind}`);
    }

    const multisig = [
        await build('ValueTransfer signed by K1 and K3 (two sender signatures), chain 1001, nonce 7', 'valueTransfer',
            { chainId: 1001, nonce: 7, gas: 100000, to: T, value: ONE_KLAY }, [K1, K3]),
        await build('FeeDelegatedValueTransfer, fee payer signed with K2 and K3 (two fee payer signatures), chain 1001, nonce 1', 'feeDelegatedValueTransfer',
            { chainId: 1001, nonce: 1, gas: 100000, to: T, value: 1 }, [K1], [K2, K3]),
    ];
    if (multisig[0].signatures.length !== 2 || multisig[1].feePayerSignatures.length !== 2) throw new Error('multisig: expected two signatures');

    const doc = {
        description:
            'Klaytn transactions built and signed by caver-js (an independent signer), offline. ' +
            'Regenerate: cd tests/oracle/caver && npm ci && node generate.js > vectors.json. ' +
            'typeInt and chainId are numbers; every other quantity and byte string is 0x-prefixed lower-case hex (quantities minimal: 0 is 0x0). ' +
            'inputs holds the fields given to caver (to null = contract creation, no to given); for AccountUpdate types, key is the RLP-encoded account key (getRLPEncodingAccountKey) and keyType names it; ' +
            'feePayer is K2\'s address, set by signAsFeePayer(K2). codeFormat 0 is EVM. ' +
            'sigRLP = getRLPEncodingForSignature(), sigHash = keccak256(sigRLP) (what the sender signs); ' +
            'feePayerSigRLP = getRLPEncodingForFeePayerSignature() with feePayer = K2, feePayerSigHash = keccak256 of it. ' +
            'senderRaw = getRLPEncoding() after the sender signed only (for fee-delegated types caver then emits the zero fee payer address and feePayerSignatures [[0x01,0x,0x]]); ' +
            'raw = getRLPEncoding() fully signed; txHash = getTransactionHash(); senderTxHash = getSenderTxHash() (equals txHash unless fee-delegated). ' +
            'signatures / feePayerSignatures: [v, r, s] as caver holds them (legacy and Ethereum types have one). ' +
            'decoded = caver.transaction.decode(raw).getRLPEncoding(), equal to raw. ' +
            'Ethereum types (0x7801, 0x7802): raw starts with the 0x78 envelope, while sigRLP and the txHash pre-image start with 0x01 / 0x02 (no 0x78).',
        generator: { tool: 'caver-js', version: CAVER_VERSION, script: 'tests/oracle/caver/generate.js' },
        keys: {
            K1: { privateKey: K1, address: A1, role: 'sender' },
            K2: { privateKey: K2, address: A2, role: 'fee payer' },
            K3: { privateKey: K3, address: A3, role: 'third key (account keys, multisig)' },
        },
        publicKeys: { K1: PUB1.toLowerCase(), K2: PUB2.toLowerCase(), K3: PUB3.toLowerCase() },
        vectors,
        multisig,
    };
    process.stdout.write(JSON.stringify(doc, null, 1) + '\n');
}

main().catch((e) => {
    console.error(e);
    process.exit(1);
});
