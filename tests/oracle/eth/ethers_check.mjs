// ethers v6 against a node, as a dapp would use it; run by tests/eth_tools.rs.
//
// Environment: ETH_RPC_URL (http://...), ETH_TEST_KEY (0x-hex key of a funded account),
// ETH_TEST_RECIPIENT (an address receiving the value transfers and tokens). Nothing secret
// goes through argv. Deploys tests/contracts/out/Token.json, transfers tokens, reads the
// Transfer event through contract.on (eth_newFilter + eth_getFilterChanges) and eth_getLogs,
// estimates gas, reads eth_feeHistory, sends one EIP-1559 and one legacy value transfer, and
// prints a JSON summary that the Rust test checks against the node's own chain_ answers.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// Through require, which looks in NODE_PATH too: the test installs ethers under target/.
const { ContractFactory, Contract, JsonRpcProvider, Wallet, version } =
  createRequire(import.meta.url)("ethers");

const SUPPLY = 10n ** 24n;
const TOKENS = 4321n;

// BigInt as a decimal string (Node 20 has no JSON.rawJSON; the Rust side reads both).
const json = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? x.toString() : x));

const receiptSummary = (r) => ({
  hash: r.hash,
  blockNumber: r.blockNumber,
  blockHash: r.blockHash,
  gasUsed: r.gasUsed,
  effectiveGasPrice: r.gasPrice,
  status: r.status,
  type: r.type,
  contractAddress: r.contractAddress,
  logs: r.logs.length,
});

const eventSummary = (e) => ({
  txHash: e.transactionHash,
  blockNumber: e.blockNumber,
  logIndex: e.index,
  address: e.address,
  from: e.args[0],
  to: e.args[1],
  value: e.args[2],
});

async function main() {
  // No 250 ms answer cache: a block sealed at once would otherwise give a stale nonce.
  const provider = new JsonRpcProvider(process.env.ETH_RPC_URL, undefined, { cacheTimeout: -1 });
  provider.pollingInterval = 100;
  const wallet = new Wallet(process.env.ETH_TEST_KEY, provider);
  const me = wallet.address;
  const recipient = process.env.ETH_TEST_RECIPIENT;
  const out = { client: `ethers ${version}`, sender: me };
  out.chainId = (await provider.getNetwork()).chainId;
  // getFeeData treats a chain whose latest base fee is 0 (falsy) as one without EIP-1559:
  // maxFeePerGas and maxPriorityFeePerGas null, and a transaction without a type is legacy.
  const fees = await provider.getFeeData();
  out.feeData = {
    gasPrice: fees.gasPrice,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  };
  out.gasPrice = fees.gasPrice;
  out.maxPriorityFee = BigInt(await provider.send("eth_maxPriorityFeePerGas", []));
  out.startBalance = await provider.getBalance(me);

  const compiled = JSON.parse(
    readFileSync(new URL("../../contracts/out/Token.json", import.meta.url), "utf8"),
  );
  // Defaults filled by ethers: nonce, gas (eth_estimateGas), chainId and the EIP-1559 fees
  // from getFeeData (eth_maxPriorityFeePerGas and the latest block's base fee).
  const factory = new ContractFactory(compiled.abi, compiled.bytecode, wallet);
  const deployed = await factory.deploy(SUPPLY);
  const deploy = await deployed.deploymentTransaction().wait();
  out.deploy = receiptSummary(deploy);
  const token = new Contract(deploy.contractAddress, compiled.abi, wallet);
  out.token = deploy.contractAddress;
  out.code = await provider.getCode(out.token);

  // contract.on polls a filter: eth_newFilter, then eth_getFilterChanges.
  const seen = [];
  let heard;
  const arrived = new Promise((resolve) => (heard = resolve));
  await token.on("Transfer", (from, to, value, payload) => {
    seen.push(eventSummary(payload.log));
    if (to === recipient) heard();
  });
  out.estimate = await token.transfer.estimateGas(recipient, TOKENS);
  const sent = await token.transfer(recipient, TOKENS);
  const transfer = await sent.wait();
  out.transfer = receiptSummary(transfer);
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error("no Transfer event through the filter in 20 s")), 20000).unref(),
  );
  await Promise.race([arrived, timeout]);
  await token.removeAllListeners();
  out.filterEvents = seen;
  out.logs = (
    await token.queryFilter("Transfer", deploy.blockNumber, transfer.blockNumber)
  ).map(eventSummary);
  out.rawLogs = (
    await provider.getLogs({ address: out.token, fromBlock: deploy.blockNumber, toBlock: "latest" })
  ).map((l) => ({
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: l.blockNumber,
    txHash: l.transactionHash,
  }));
  out.tokenBalance = await token.balanceOf(recipient);

  // An EIP-1559 transfer with the fees ethers computes where the base fee is not 0
  // (2 * base fee + eth_maxPriorityFeePerGas), then a legacy one at eth_gasPrice.
  const latest = await provider.getBlock("latest");
  let tx = await wallet.sendTransaction({
    to: recipient,
    value: 3n * 10n ** 15n,
    type: 2,
    maxPriorityFeePerGas: out.maxPriorityFee,
    maxFeePerGas: 2n * latest.baseFeePerGas + out.maxPriorityFee,
  });
  let r = await tx.wait();
  out.eip1559 = {
    ...receiptSummary(r),
    maxFeePerGas: tx.maxFeePerGas,
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
    value: tx.value,
  };
  tx = await wallet.sendTransaction({
    to: recipient,
    value: 4n * 10n ** 15n,
    type: 0,
    gasPrice: (await provider.getFeeData()).gasPrice,
  });
  r = await tx.wait();
  out.legacy = { ...receiptSummary(r), gasPrice: tx.gasPrice, value: tx.value };

  // ethers has no wrapper for eth_feeHistory: the raw call, its quantities read as numbers.
  const fh = await provider.send("eth_feeHistory", ["0x4", "latest", [25, 75]]);
  out.feeHistory = {
    oldestBlock: Number(fh.oldestBlock),
    baseFeePerGas: fh.baseFeePerGas.map(BigInt),
    gasUsedRatio: fh.gasUsedRatio,
    reward: fh.reward.map((rs) => rs.map(BigInt)),
  };
  const block = await provider.getBlock(r.blockNumber);
  out.block = {
    number: block.number,
    hash: block.hash,
    transactions: block.transactions,
    baseFeePerGas: block.baseFeePerGas,
  };
  out.endBalance = await provider.getBalance(me);
  out.recipientBalance = await provider.getBalance(recipient);
  out.nonce = await provider.getTransactionCount(me);
  console.log(json(out));
  provider.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
