"""Runs the reference team's JSON-RPC suite (klaytn/klaytn-rpc-tester) against `chaind --dev`.

The suite is copied, unmodified, into a temporary directory (it writes its config.json, its
reports and a block.rlp beside itself) and imported there. What this runner changes, and only
at the edges, is listed in SHIMS below and printed at the start of every run.

Start it through run.sh, which makes the virtualenv. Exit status: 0 when every test passes or
is listed in known-failures.txt with its reason, 1 otherwise (or, with --strict, also when a
listed test passed: the list must stay true).
"""

import argparse
import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
import unittest

SHIMS = [
    "method names: klay_X is sent as chain_X, the module klay in admin_startRPC/startWS's list as "
    "chain, and chain_ in error texts reads klay_ again",
    "ports: the suite's fixed 8551/8552 become the free ports this runner chose",
    "addresses: host 0.0.0.0 in admin_startRPC/startHTTP/startWS becomes 127.0.0.1, and the "
    "hosts of kni URLs given to admin_addPeer/removePeer become 127.0.0.1 (the suite's 10.10.0.x "
    "peers are as unreachable there): the run never reaches beyond loopback",
    "waits: the suite's 2-5 s pauses for a block last --wait seconds (the dev chain seals at once)",
    "set-up: a transaction type the node refuses to build is recorded and left out (its hash "
    "empty) instead of aborting the whole run; the tests that read it fail and are listed",
]

MULTISIG_SENDER = "0xa2a8854b1802d8cd5de631e690817c253d6a9153"
NAMESPACES_DEFAULT = "admin,debug,eth,klay,net,personal,txpool"
RPC_MODULES = "admin,chain,debug,eth,net,personal,rpc,txpool,web3"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(port, method, params):
    import requests

    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    r = requests.post(f"http://127.0.0.1:{port}", json=body, timeout=30).json()
    if "error" in r:
        raise RuntimeError(f"{method}: {r['error']}")
    return r["result"]


def start_node(chaind, datadir, rpc_port, ws_port, chain_id, log):
    args = [
        chaind, "--dev", "--datadir", datadir, "--chainid", str(chain_id),
        "--networkid", str(chain_id),
        "--rpc", "--rpcaddr", "127.0.0.1", "--rpcport", str(rpc_port), "--rpcapi", RPC_MODULES,
        "--ws", "--wsaddr", "127.0.0.1", "--wsport", str(ws_port), "--wsapi", RPC_MODULES,
        "--wsorigins", "*", "--allow-insecure-unlock", "--txpool.allow-local-anchortx",
        "--p2paddr", "127.0.0.1", "--port", "0", "--ipcdisable",
    ]
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chaind exited with {proc.returncode}; see {log.name}")
        try:
            post(rpc_port, "chain_blockNumber", [])
            return proc
        except Exception:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("chaind did not answer within 30 s")


def fund(rpc_port, faucet, amount_wei):
    dev = post(rpc_port, "personal_listAccounts", [])[0]
    tx = {"from": dev, "to": faucet, "value": hex(amount_wei)}
    h = post(rpc_port, "personal_sendTransaction", [tx, ""])
    for _ in range(200):
        if post(rpc_port, "chain_getTransactionReceipt", [h]) is not None:
            return dev
        time.sleep(0.05)
    raise RuntimeError("the faucet's funding was not sealed")


def namespace_of(test):
    name = type(test).__name__  # e.g. TestKlayNamespaceBlockRPC
    m = re.match(r"Test([A-Z][a-z]+)Namespace", name)
    return m.group(1).lower() if m else name


class Recorder(unittest.TextTestResult):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.outcomes = []  # (namespace, protocol, test name, outcome, detail)

    def _protocol(self, test):
        return "ws" if type(test).__name__.endswith("WS") else "rpc"

    def _add(self, test, outcome, detail=""):
        self.outcomes.append((namespace_of(test), self._protocol(test), test._testMethodName, outcome, detail))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "fail", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skip", reason)


def load_known(path):
    known = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            known[name] = reason.strip()
    return known


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chaind", required=True)
    ap.add_argument("--suite", required=True, help="the suite's directory (read, never written)")
    ap.add_argument("--protocol", choices=["rpc", "ws", "both"], default="both")
    ap.add_argument("--namespaces", default=NAMESPACES_DEFAULT,
                    help=f"comma-separated, the suite's names (default {NAMESPACES_DEFAULT}; eth also runs)")
    ap.add_argument("--wait", type=float, default=1.0, help="seconds each of the suite's pauses lasts (default 1)")
    ap.add_argument("--only", default="", help="run only tests whose name contains this text")
    ap.add_argument("--known", default=os.path.join(os.path.dirname(__file__), "known-failures.txt"))
    ap.add_argument("--strict", action="store_true", help="also fail when a listed test passes")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, node data)")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("--verbose", action="store_true", help="print the suite's own request log")
    opts = ap.parse_args()

    suite_src = os.path.abspath(opts.suite)
    if not os.path.isfile(os.path.join(suite_src, "main.py")):
        sys.exit(f"no klaytn-rpc-tester at {suite_src} (set RPC_TESTER_DIR)")
    work = tempfile.mkdtemp(prefix="rpc-suite-")
    suite = os.path.join(work, "suite")
    shutil.copytree(suite_src, suite, ignore=shutil.ignore_patterns(".git", "venv", "reports"))
    upstream = open(os.path.join(suite_src, "UPSTREAM_COMMIT")).read().strip() if os.path.exists(
        os.path.join(suite_src, "UPSTREAM_COMMIT")) else "unknown"

    print(f"klaytn-rpc-tester {upstream} from {suite_src}")
    print(f"work directory {work}")
    print("shims:")
    for s in SHIMS:
        print(f"  - {s}")

    rpc_port, ws_port = free_port(), free_port()
    chain_id = 2019
    template = json.load(open(os.path.join(suite, "config_template.json")))
    config = dict(template)
    config.update({"endpoint": "127.0.0.1", "rpcPort": str(rpc_port), "wsPort": str(ws_port),
                   "chainId": str(chain_id), "namespaces": opts.namespaces})
    json.dump(config, open(os.path.join(suite, "config.json"), "w"), indent=2)

    log = open(os.path.join(work, "chaind.log"), "w")
    node = start_node(opts.chaind, os.path.join(work, "data"), rpc_port, ws_port, chain_id, log)
    try:
        fund(rpc_port, config["faucetAddress"], 10**26)
        if config.get("feePayerAddress", config["faucetAddress"]).lower() != config["faucetAddress"].lower():
            fund(rpc_port, config["feePayerAddress"], 10**26)
        # The sender of the suite's pre-signed multisig account update, funded in its genesis.
        fund(rpc_port, MULTISIG_SENDER, 10**24)
        outcomes, setup_gaps = run_suite(opts, suite, work, rpc_port, ws_port)
    finally:
        try:
            os.killpg(node.pid, signal.SIGTERM)
            node.wait(timeout=10)
        except Exception:
            node.kill()
        log.close()
    code = report(opts, outcomes, setup_gaps)
    if not opts.keep and code == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs kept in {work} (chaind.log, reports/)")
    sys.exit(code)


def run_suite(opts, suite, work, rpc_port, ws_port):
    os.chdir(suite)
    sys.path.insert(0, suite)
    sys.modules["HtmlTestRunner"] = types.SimpleNamespace(HTMLTestRunner=None)
    if not opts.verbose:
        import builtins
        real_print = builtins.print

        def quiet_print(*a, **kw):
            if kw.get("file") not in (None, sys.stdout):
                return real_print(*a, **kw)
        builtins.print = quiet_print
        sys.stdout.write = _filtered_write(sys.stdout.write)

    import utils as suite_utils  # noqa: E402  (the suite's own module)

    Utils = suite_utils.Utils
    orig_rpc, orig_ws = Utils.call_rpc, Utils.call_ws

    def to_wire(method, params):
        if method.startswith("klay_"):
            method = "chain_" + method[len("klay_"):]
        if isinstance(params, list) and params:
            if method in ("admin_startRPC", "admin_startHTTP", "admin_startWS") and params[0] == "0.0.0.0":
                params = ["127.0.0.1"] + params[1:]
            if method in ("admin_startRPC", "admin_startHTTP", "admin_startWS") and len(params) > 3 \
                    and isinstance(params[3], str):
                params = params[:3] + [",".join("chain" if m == "klay" else m for m in params[3].split(","))] + params[4:]
            if method in ("admin_addPeer", "admin_removePeer") and isinstance(params[0], str):
                params = [re.sub(r"@[^:/?]+:", "@127.0.0.1:", params[0])] + params[1:]
        return method, params

    def from_wire(error):
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            error = dict(error)
            error["message"] = error["message"].replace("chain_", "klay_")
        return error

    def call_rpc(endpoint, method, params, log_file, save_result=False, port=8551):
        method, params = to_wire(method, params)
        out = orig_rpc(endpoint, method, params, log_file, save_result, port=rpc_port)
        if isinstance(out, tuple):
            return out[0], from_wire(out[1])
        return out

    def call_ws(endpoint, method, params, log_file, save_result=False, port=8552):
        method, params = to_wire(method, params)
        result, error = orig_ws(endpoint, method, params, log_file, save_result, port=ws_port)
        return result, from_wire(error)

    wait = opts.wait

    def waiting_count(front, second, rear):
        time.sleep(min(second, wait))

    Utils.call_rpc = staticmethod(call_rpc)
    Utils.call_ws = staticmethod(call_ws)
    Utils.waiting_count = staticmethod(waiting_count)

    import main as suite_main  # noqa: E402

    # Set-up: the suite's own functions, with a refused transaction type recorded, not fatal.
    setup_gaps = []
    from common import klay as klay_common

    in_setup = {"on": True}
    real_call_rpc = Utils.call_rpc

    def setup_call_rpc(endpoint, method, params, log_file, save_result=False, port=8551):
        result, error = real_call_rpc(endpoint, method, params, log_file, save_result, port)
        if in_setup["on"] and error is not None and method in (
                "klay_sendTransaction", "klay_signTransaction", "klay_sendTransactionAsFeePayer"):
            tx = params[0] if params else {}
            if not any(g[0] == tx.get("typeInt", 0) for g in setup_gaps):
                setup_gaps.append((tx.get("typeInt", 0), method, error.get("message")))
            if method == "klay_signTransaction":
                return {"tx": {"signatures": [], "nonce": "0x0"}}, None
            return None, None
        return result, error

    real_receipt = klay_common.get_transaction_receipt

    def setup_receipt(endpoint, params):
        if in_setup["on"] and params and params[0] is None:
            return {"blockHash": None, "blockNumber": None, "transactionIndex": None, "status": None}, None
        return real_receipt(endpoint, params)

    real_multisig = suite_main.make_multisig_account

    def setup_multisig():
        try:
            real_multisig()
        except AssertionError:
            setup_gaps.append((32, "klay_sendRawTransaction (the suite's pre-signed multisig account update)",
                               "refused: see chaind.log and the suite's reports/"))

    suite_main.make_multisig_account = setup_multisig
    Utils.call_rpc = staticmethod(setup_call_rpc)
    klay_common.get_transaction_receipt = setup_receipt
    suite_main.initialize()
    in_setup["on"] = False
    Utils.call_rpc = staticmethod(call_rpc)
    klay_common.get_transaction_receipt = real_receipt

    suites = []
    if opts.protocol in ("rpc", "both"):
        suites += suite_main.rpc_test_suites
    if opts.protocol in ("ws", "both"):
        suites += suite_main.ws_test_suites
    all_tests = unittest.TestSuite(suites)
    if opts.only:
        all_tests = unittest.TestSuite(t for t in _flatten(all_tests) if opts.only in t._testMethodName)

    runner = unittest.TextTestRunner(stream=open(os.path.join(work, "unittest.log"), "w"),
                                     resultclass=Recorder, verbosity=2)
    result = runner.run(all_tests)
    return result.outcomes, setup_gaps


def _flatten(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from _flatten(t)
        else:
            yield t


def _filtered_write(write):
    def w(text):
        # The suite's countdowns and request logs go to stdout; keep only this runner's lines.
        if text.startswith("[runner]"):
            return write(text[len("[runner]"):])
        return len(text)
    return w


def say(line):
    sys.stdout.write("[runner]" + line + "\n")


def report(opts, outcomes, setup_gaps):
    known = load_known(opts.known) if os.path.exists(opts.known) else {}
    say("")
    if setup_gaps:
        say(f"set-up: {len(setup_gaps)} transaction(s) the node refused (the tests reading them are listed):")
        for type_int, method, msg in setup_gaps:
            say(f"  typeInt {type_int}: {method}: {msg}")
    counts = collections.OrderedDict()
    unexpected, stale = [], []
    for ns, proto, name, outcome, detail in outcomes:
        c = counts.setdefault((proto, ns), collections.Counter())
        c["total"] += 1
        if outcome == "pass":
            c["pass"] += 1
            if name in known:
                stale.append((proto, name))
        elif name in known:
            c["listed"] += 1
        else:
            c["fail"] += 1
            unexpected.append((proto, ns, name, detail))
    say(f"{'via':>8} {'namespace':<10} {'total':>5} {'passed':>6} {'listed':>6} {'failed':>6}")
    for (proto, ns), c in counts.items():
        say(f"{proto:>8} {ns:<10} {c['total']:>5} {c['pass']:>6} {c['listed']:>6} {c['fail']:>6}")
    tot = collections.Counter()
    for c in counts.values():
        tot.update(c)
    say(f"{'all':>8} {'':<10} {tot['total']:>5} {tot['pass']:>6} {tot['listed']:>6} {tot['fail']:>6}")
    if unexpected:
        say("")
        say(f"{len(unexpected)} failure(s) not listed in {os.path.basename(opts.known)}:")
        for proto, ns, name, detail in unexpected:
            last = [l for l in detail.strip().splitlines() if l.strip()][-1:] or [""]
            say(f"  {proto} {name}: {last[0][:300]}")
    if stale:
        say("")
        say(f"{len(stale)} listed test(s) passed (remove them from the list):")
        for proto, name in stale:
            say(f"  {proto} {name}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump([dict(zip(("namespace", "protocol", "test", "outcome", "detail"), o)) for o in outcomes],
                      f, indent=1)
    if unexpected or (opts.strict and stale):
        return 1
    return 0


if __name__ == "__main__":
    main()
