#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Compiles every tests/contracts/*.sol with solc's standard JSON interface and
// writes tests/contracts/out/<Contract>.json for each contract.
//
// Usage: node compile.js <path to the solc npm package>
// (build.sh installs solc in a temporary directory and passes that path.)
'use strict';

const fs = require('fs');
const path = require('path');

const EVM_VERSION = 'shanghai';
const SOLC_VERSION = '0.8.24'; // must match build.sh

const solcPath = process.argv[2];
if (!solcPath) {
    console.error('usage: node compile.js <path to node_modules/solc>');
    process.exit(2);
}
const solc = require(path.resolve(solcPath));
const version = solc.version();
if (!version.startsWith(SOLC_VERSION + '+')) {
    console.error(`expected solc ${SOLC_VERSION}, got ${version}`);
    process.exit(1);
}

const dir = __dirname;
const outDir = path.join(dir, 'out');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.sol')).sort();

const input = {
    language: 'Solidity',
    sources: Object.fromEntries(files.map((f) => [f, { content: fs.readFileSync(path.join(dir, f), 'utf8') }])),
    settings: {
        evmVersion: EVM_VERSION,
        optimizer: { enabled: true, runs: 200 },
        outputSelection: {
            '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object', 'evm.methodIdentifiers'] },
        },
    },
};

const output = JSON.parse(solc.compile(JSON.stringify(input)));
let failed = false;
for (const e of output.errors || []) {
    console.error(e.formattedMessage || e.message);
    if (e.severity === 'error') failed = true;
}
if (failed) process.exit(1);

// Opcodes newer than Shanghai that must not appear (Cancun: BLOBHASH, BLOBBASEFEE,
// TLOAD, TSTORE, MCOPY).
const CANCUN = new Set([0x49, 0x4a, 0x5c, 0x5d, 0x5e]);

// Walks the code part of runtime bytecode (up to the first INVALID, 0xfe, after
// which solc places data: embedded initcode and the metadata) and returns the
// set of opcodes seen.
function opcodes(hex) {
    const code = Buffer.from(hex, 'hex');
    const seen = new Set();
    for (let i = 0; i < code.length; i++) {
        const op = code[i];
        if (op === 0xfe) break;
        seen.add(op);
        if (op >= 0x60 && op <= 0x7f) i += op - 0x5f; // PUSH1..PUSH32 data
    }
    return seen;
}

fs.mkdirSync(outDir, { recursive: true });
for (const f of files) {
    for (const [name, c] of Object.entries(output.contracts[f] || {}).sort(([a], [b]) => a.localeCompare(b))) {
        const ops = opcodes(c.evm.deployedBytecode.object);
        const bad = [...ops].filter((op) => CANCUN.has(op));
        if (bad.length) {
            console.error(`${name}: Cancun opcodes in runtime code: ${bad.map((o) => '0x' + o.toString(16))}`);
            process.exit(1);
        }
        const record = {
            contract: name,
            source: f,
            solc: version,
            evmVersion: EVM_VERSION,
            abi: c.abi,
            bytecode: '0x' + c.evm.bytecode.object,
            deployedBytecode: '0x' + c.evm.deployedBytecode.object,
            methodIdentifiers: c.evm.methodIdentifiers,
        };
        const out = path.join(outDir, `${name}.json`);
        fs.writeFileSync(out, JSON.stringify(record, null, 2) + '\n');
        console.log(`${path.relative(process.cwd(), out)}: ${c.evm.bytecode.object.length / 2} bytes creation, ` +
            `${c.evm.deployedBytecode.object.length / 2} bytes runtime${ops.has(0x5f) ? ', uses PUSH0' : ''}`);
    }
}
