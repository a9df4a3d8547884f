"""web3.py against a node, as a dapp would use it; run by tests/eth_tools.rs.

Environment: ETH_RPC_URL (http://...), ETH_TEST_KEY (0x-hex key of a funded account),
ETH_TEST_RECIPIENT (an address receiving the value transfers and tokens). Nothing secret
goes through argv. Deploys tests/contracts/out/Token.json, transfers tokens, reads the
Transfer event through a filter (eth_newFilter + eth_getFilterChanges) and eth_getLogs,
estimates gas, reads eth_feeHistory, sends one EIP-1559 and one legacy value transfer, and
prints a JSON summary that the Rust test checks against the node's own chain_ answers.
"""

import json
import os
import pathlib
import sys
import time

from eth_account import Account
from web3 import Web3
from web3.middleware import SignAndSendRawMiddlewareBuilder

SUPPLY = 10**24
TOKENS = 1234


def receipt_summary(r):
    return {
        "hash": r["transactionHash"].to_0x_hex(),
        "blockNumber": r["blockNumber"],
        "blockHash": r["blockHash"].to_0x_hex(),
        "gasUsed": r["gasUsed"],
        "effectiveGasPrice": r["effectiveGasPrice"],
        "status": r["status"],
        "type": r["type"],
        "contractAddress": r["contractAddress"],
        "logs": len(r["logs"]),
    }


def event_summary(e):
    return {
        "txHash": e["transactionHash"].to_0x_hex(),
        "blockNumber": e["blockNumber"],
        "logIndex": e["logIndex"],
        "address": e["address"],
        "from": e["args"]["from"],
        "to": e["args"]["to"],
        "value": e["args"]["value"],
    }


def main():
    w3 = Web3(Web3.HTTPProvider(os.environ["ETH_RPC_URL"], request_kwargs={"timeout": 30}))
    acct = Account.from_key(os.environ["ETH_TEST_KEY"])
    w3.middleware_onion.inject(SignAndSendRawMiddlewareBuilder.build(acct), layer=0)
    me = acct.address
    recipient = Web3.to_checksum_address(os.environ["ETH_TEST_RECIPIENT"])
    out = {"client": "web3.py " + __import__("web3").__version__, "sender": me}
    out["chainId"] = w3.eth.chain_id
    out["gasPrice"] = w3.eth.gas_price
    out["maxPriorityFee"] = w3.eth.max_priority_fee
    out["startBalance"] = w3.eth.get_balance(me)

    compiled = json.loads(
        (pathlib.Path(__file__).parents[2] / "contracts/out/Token.json").read_text()
    )
    Token = w3.eth.contract(abi=compiled["abi"], bytecode=compiled["bytecode"])
    # Defaults filled by web3.py: nonce, gas (eth_estimateGas), chainId and the EIP-1559
    # fees from eth_maxPriorityFeePerGas and the latest block's base fee.
    h = Token.constructor(SUPPLY).transact({"from": me})
    deploy = w3.eth.wait_for_transaction_receipt(h, timeout=30, poll_latency=0.05)
    out["deploy"] = receipt_summary(deploy)
    token = w3.eth.contract(address=deploy["contractAddress"], abi=compiled["abi"])
    out["token"] = token.address
    out["code"] = w3.eth.get_code(token.address).to_0x_hex()

    event_filter = token.events.Transfer.create_filter(from_block="latest")
    out["estimate"] = token.functions.transfer(recipient, TOKENS).estimate_gas({"from": me})
    h = token.functions.transfer(recipient, TOKENS).transact({"from": me})
    transfer = w3.eth.wait_for_transaction_receipt(h, timeout=30, poll_latency=0.05)
    out["transfer"] = receipt_summary(transfer)
    changes = []
    deadline = time.time() + 20
    while not changes and time.time() < deadline:
        changes = event_filter.get_new_entries()
        time.sleep(0.05)
    out["filterEvents"] = [event_summary(e) for e in changes]
    out["logs"] = [
        event_summary(e)
        for e in token.events.Transfer.get_logs(
            from_block=deploy["blockNumber"], to_block=transfer["blockNumber"]
        )
    ]
    out["rawLogs"] = [
        {
            "address": l["address"],
            "topics": [t.to_0x_hex() for t in l["topics"]],
            "data": l["data"].to_0x_hex(),
            "blockNumber": l["blockNumber"],
            "txHash": l["transactionHash"].to_0x_hex(),
        }
        for l in w3.eth.get_logs(
            {"address": token.address, "fromBlock": deploy["blockNumber"], "toBlock": "latest"}
        )
    ]
    out["tokenBalance"] = token.functions.balanceOf(recipient).call()

    # An EIP-1559 transfer with web3.py's default fees, then a legacy one at eth_gasPrice.
    h = w3.eth.send_transaction({"from": me, "to": recipient, "value": 10**15})
    r = w3.eth.wait_for_transaction_receipt(h, timeout=30, poll_latency=0.05)
    out["eip1559"] = receipt_summary(r)
    tx = w3.eth.get_transaction(h)
    out["eip1559"]["maxFeePerGas"] = tx["maxFeePerGas"]
    out["eip1559"]["maxPriorityFeePerGas"] = tx["maxPriorityFeePerGas"]
    out["eip1559"]["value"] = tx["value"]
    h = w3.eth.send_transaction(
        {"from": me, "to": recipient, "value": 2 * 10**15, "gasPrice": w3.eth.gas_price}
    )
    r = w3.eth.wait_for_transaction_receipt(h, timeout=30, poll_latency=0.05)
    out["legacy"] = receipt_summary(r)
    tx = w3.eth.get_transaction(h)
    out["legacy"]["gasPrice"] = tx["gasPrice"]
    out["legacy"]["value"] = tx["value"]

    fh = w3.eth.fee_history(4, "latest", [25.0, 75.0])
    out["feeHistory"] = {
        "oldestBlock": fh["oldestBlock"],
        "baseFeePerGas": fh["baseFeePerGas"],
        "gasUsedRatio": fh["gasUsedRatio"],
        "reward": fh["reward"],
    }
    block = w3.eth.get_block(r["blockNumber"])
    out["block"] = {
        "number": block["number"],
        "hash": block["hash"].to_0x_hex(),
        "transactions": [t.to_0x_hex() for t in block["transactions"]],
        "baseFeePerGas": block.get("baseFeePerGas"),
    }
    out["endBalance"] = w3.eth.get_balance(me)
    out["recipientBalance"] = w3.eth.get_balance(recipient)
    out["nonce"] = w3.eth.get_transaction_count(me)
    json.dump(big_as_text(out), sys.stdout)
    print()


def big_as_text(v):
    """Integers past 2^53 as decimal strings, which any JSON reader keeps exact."""
    if isinstance(v, dict):
        return {k: big_as_text(x) for k, x in v.items()}
    if isinstance(v, list):
        return [big_as_text(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**53:
        return str(v)
    return v


if __name__ == "__main__":
    main()
