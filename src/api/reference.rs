//! What the reference node serves that this node may not: its JSON-RPC method names and its
//! module names. The node marks the reference's methods it does not build, so that -32601
//! says so ([`register`]), and module lists (`--rpcapi`, `--wsapi`, the `apis` argument of
//! `admin_startHTTP`/`admin_startWS`) accept the reference's module names ([`MODULES`]).

use crate::rpc::Registry;

/// The reference's modules that this node does not build under their name, and the module of
/// ours that serves each one's methods (`klay` is our `chain`). In a module list they are
/// accepted: `klay` offers `chain`, the others offer nothing here (with a warning in the log).
/// `shh` is in the reference's own default lists though it builds no such module; `miner` is
/// in the service spec's list of modules; the bridge, data-fetcher and clique modules exist
/// on other configurations of the reference node (admin-and-rpc.md 2.1).
pub const MODULES: &[(&str, Option<&str>)] = &[
    ("klay", Some("chain")),
    ("governance", None),
    ("istanbul", None),
    ("miner", None),
    ("shh", None),
    ("mainbridge", None),
    ("subbridge", None),
    ("chaindatafetcher", None),
    ("clique", None),
];

/// Every method the reference's consensus node registers: the exported methods of the
/// services of `api/backend.go` (`GetAPIs`), `node/cn/backend.go` (`CN.APIs`),
/// `node/node.go` (`Node.apis`) and `consensus/istanbul/backend/engine.go` (`APIs`), methods
/// of embedded structs included, each named `<namespace>_<method with its first letter
/// lower-cased>`, a method returning a subscription as `<namespace>_subscribe` and
/// `_unsubscribe` (klaytn/klaytn at 32b13162). Left out: `EthereumAPI`'s `Set*` methods,
/// which wire the `eth` service together and take no JSON.
pub const METHODS: &[&str] = &[
    "admin_addPeer",
    "admin_datadir",
    "admin_exportChain",
    "admin_getSpamThrottlerCandidateList",
    "admin_getSpamThrottlerThrottleList",
    "admin_getSpamThrottlerWhiteList",
    "admin_importChain",
    "admin_importChainFromString",
    "admin_nodeConfig",
    "admin_nodeInfo",
    "admin_peers",
    "admin_removePeer",
    "admin_saveTrieNodeCacheToDisk",
    "admin_setMaxSubscriptionPerWSConn",
    "admin_setSpamThrottlerWhiteList",
    "admin_spamThrottlerConfig",
    "admin_startHTTP",
    "admin_startRPC",
    "admin_startSpamThrottler",
    "admin_startStateMigration",
    "admin_startWS",
    "admin_stateMigrationStatus",
    "admin_stopHTTP",
    "admin_stopRPC",
    "admin_stopSpamThrottler",
    "admin_stopStateMigration",
    "admin_stopWS",
    "admin_subscribe",
    "admin_syncStakingInfo",
    "admin_syncStakingInfoStatus",
    "admin_unsubscribe",
    "debug_chaindbCompact",
    "debug_chaindbProperty",
    "debug_cpuProfile",
    "debug_dumpBlock",
    "debug_dumpStateTrie",
    "debug_getBadBlocks",
    "debug_getBlockRlp",
    "debug_getModifiedAccountsByHash",
    "debug_getModifiedAccountsByNumber",
    "debug_getModifiedStorageNodesByNumber",
    "debug_goTrace",
    "debug_isPProfRunning",
    "debug_metrics",
    "debug_preimage",
    "debug_printBlock",
    "debug_setHead",
    "debug_setVMLogTarget",
    "debug_standardTraceBadBlockToFile",
    "debug_standardTraceBlockToFile",
    "debug_startCPUProfile",
    "debug_startCollectingTrieStats",
    "debug_startContractWarmUp",
    "debug_startGoTrace",
    "debug_startPProf",
    "debug_startWarmUp",
    "debug_stopCPUProfile",
    "debug_stopGoTrace",
    "debug_stopPProf",
    "debug_stopWarmUp",
    "debug_storageRangeAt",
    "debug_subscribe",
    "debug_traceBadBlock",
    "debug_traceBlock",
    "debug_traceBlockByHash",
    "debug_traceBlockByNumber",
    "debug_traceBlockByNumberRange",
    "debug_traceBlockFromFile",
    "debug_traceCall",
    "debug_traceTransaction",
    "debug_unsubscribe",
    "debug_writeVMLog",
    "eth_accounts",
    "eth_blockNumber",
    "eth_call",
    "eth_chainId",
    "eth_coinbase",
    "eth_createAccessList",
    "eth_estimateGas",
    "eth_etherbase",
    "eth_feeHistory",
    "eth_fillTransaction",
    "eth_gasPrice",
    "eth_getBalance",
    "eth_getBlockByHash",
    "eth_getBlockByNumber",
    "eth_getBlockReceipts",
    "eth_getBlockTransactionCountByHash",
    "eth_getBlockTransactionCountByNumber",
    "eth_getCode",
    "eth_getFilterChanges",
    "eth_getFilterLogs",
    "eth_getHashrate",
    "eth_getHeaderByHash",
    "eth_getHeaderByNumber",
    "eth_getLogs",
    "eth_getProof",
    "eth_getRawTransactionByBlockHashAndIndex",
    "eth_getRawTransactionByBlockNumberAndIndex",
    "eth_getRawTransactionByHash",
    "eth_getStorageAt",
    "eth_getTransactionByBlockHashAndIndex",
    "eth_getTransactionByBlockNumberAndIndex",
    "eth_getTransactionByHash",
    "eth_getTransactionCount",
    "eth_getTransactionReceipt",
    "eth_getUncleByBlockHashAndIndex",
    "eth_getUncleByBlockNumberAndIndex",
    "eth_getUncleCountByBlockHash",
    "eth_getUncleCountByBlockNumber",
    "eth_getWork",
    "eth_hashrate",
    "eth_lowerBoundGasPrice",
    "eth_maxPriorityFeePerGas",
    "eth_mining",
    "eth_newBlockFilter",
    "eth_newFilter",
    "eth_newPendingTransactionFilter",
    "eth_pendingTransactions",
    "eth_resend",
    "eth_sendRawTransaction",
    "eth_sendTransaction",
    "eth_sign",
    "eth_signTransaction",
    "eth_submitHashrate",
    "eth_submitWork",
    "eth_subscribe",
    "eth_syncing",
    "eth_uninstallFilter",
    "eth_unsubscribe",
    "eth_upperBoundGasPrice",
    "governance_getChainConfig",
    "governance_getParams",
    "governance_getRewardsAccumulated",
    "governance_getStakingInfo",
    "governance_idxCache",
    "governance_idxCacheFromDb",
    "governance_itemCacheFromDb",
    "governance_myVotes",
    "governance_myVotingPower",
    "governance_nodeAddress",
    "governance_pendingChanges",
    "governance_showTally",
    "governance_totalVotingPower",
    "governance_vote",
    "governance_votes",
    "istanbul_candidates",
    "istanbul_discard",
    "istanbul_getDemoteValidators",
    "istanbul_getDemotedValidatorsAtHash",
    "istanbul_getSnapshot",
    "istanbul_getSnapshotAtHash",
    "istanbul_getTimeout",
    "istanbul_getValidators",
    "istanbul_getValidatorsAtHash",
    "istanbul_propose",
    "klay_accountCreated",
    "klay_accounts",
    "klay_blockNumber",
    "klay_call",
    "klay_chainID",
    "klay_chainId",
    "klay_clientVersion",
    "klay_createAccessList",
    "klay_decodeAccountKey",
    "klay_doEstimateGas",
    "klay_encodeAccountKey",
    "klay_estimateComputationCost",
    "klay_estimateGas",
    "klay_events",
    "klay_feeHistory",
    "klay_forkStatus",
    "klay_gasPrice",
    "klay_getAccount",
    "klay_getAccountKey",
    "klay_getActiveAddressFromRegistry",
    "klay_getAllRecordsFromRegistry",
    "klay_getBalance",
    "klay_getBlockByHash",
    "klay_getBlockByNumber",
    "klay_getBlockReceipts",
    "klay_getBlockTransactionCountByHash",
    "klay_getBlockTransactionCountByNumber",
    "klay_getBlockWithConsensusInfoByHash",
    "klay_getBlockWithConsensusInfoByNumber",
    "klay_getBlockWithConsensusInfoByNumberRange",
    "klay_getBlsInfos",
    "klay_getChainConfig",
    "klay_getCode",
    "klay_getCommittee",
    "klay_getCommitteeSize",
    "klay_getCouncil",
    "klay_getCouncilSize",
    "klay_getCypressCredit",
    "klay_getDecodedAnchoringTransactionByHash",
    "klay_getFilterChanges",
    "klay_getFilterLogs",
    "klay_getHeaderByHash",
    "klay_getHeaderByNumber",
    "klay_getLogs",
    "klay_getParams",
    "klay_getProof",
    "klay_getRawTransactionByBlockHashAndIndex",
    "klay_getRawTransactionByBlockNumberAndIndex",
    "klay_getRawTransactionByHash",
    "klay_getRewards",
    "klay_getStakingInfo",
    "klay_getStorageAt",
    "klay_getTransactionByBlockHashAndIndex",
    "klay_getTransactionByBlockNumberAndIndex",
    "klay_getTransactionByHash",
    "klay_getTransactionBySenderTxHash",
    "klay_getTransactionCount",
    "klay_getTransactionReceipt",
    "klay_getTransactionReceiptBySenderTxHash",
    "klay_getTransactionReceiptInCache",
    "klay_isContractAccount",
    "klay_isParallelDBWrite",
    "klay_isSenderTxHashIndexingEnabled",
    "klay_lowerBoundGasPrice",
    "klay_maxPriorityFeePerGas",
    "klay_newBlockFilter",
    "klay_newFilter",
    "klay_newPendingTransactionFilter",
    "klay_nodeAddress",
    "klay_pendingTransactions",
    "klay_protocolVersion",
    "klay_recoverFromMessage",
    "klay_recoverFromTransaction",
    "klay_resend",
    "klay_rewardbase",
    "klay_sendRawTransaction",
    "klay_sendTransaction",
    "klay_sendTransactionAsFeePayer",
    "klay_sha3",
    "klay_sign",
    "klay_signTransaction",
    "klay_signTransactionAsFeePayer",
    "klay_subscribe",
    "klay_syncing",
    "klay_uninstallFilter",
    "klay_unsubscribe",
    "klay_upperBoundGasPrice",
    "net_listening",
    "net_networkID",
    "net_peerCount",
    "net_peerCountByType",
    "net_version",
    "personal_deriveAccount",
    "personal_ecRecover",
    "personal_importRawKey",
    "personal_listAccounts",
    "personal_listWallets",
    "personal_lockAccount",
    "personal_newAccount",
    "personal_openWallet",
    "personal_replaceRawKey",
    "personal_sendAccountUpdate",
    "personal_sendTransaction",
    "personal_sendTransactionAsFeePayer",
    "personal_sendValueTransfer",
    "personal_sign",
    "personal_signAndSendTransaction",
    "personal_signTransaction",
    "personal_signTransactionAsFeePayer",
    "personal_unlockAccount",
    "txpool_content",
    "txpool_inspect",
    "txpool_status",
    "web3_clientVersion",
    "web3_sha3",
];

/// Our name of the reference's method `name`: its `klay` methods are our `chain` methods.
pub fn our_name(name: &str) -> String {
    match name.split_once('_') {
        Some((module, rest)) => match MODULES.iter().find(|(m, _)| *m == module) {
            Some((_, Some(ours))) => format!("{ours}_{rest}"),
            _ => name.to_string(),
        },
        None => name.to_string(),
    }
}

/// The reference's methods this node does not build, under the reference's name and, where
/// it differs, ours (`klay_getStakingInfo` and `chain_getStakingInfo`), sorted.
pub fn unbuilt() -> Vec<String> {
    let mut v = Vec::new();
    for name in METHODS {
        let ours = our_name(name);
        if super::spec::find(&ours).is_none() {
            if ours != *name {
                v.push(ours);
            }
            v.push(name.to_string());
        }
    }
    v.sort();
    v.dedup();
    v
}

/// Marks in `r` every reference method this node does not build, and the reference's module
/// names that one of ours serves, so that -32601 tells which case a call is.
pub fn register(r: &mut Registry) {
    for name in unbuilt() {
        r.mark_unbuilt(&name);
    }
    for (module, ours) in MODULES {
        if let Some(ours) = ours {
            r.alias_module(module, ours);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_methods_we_build_are_not_marked() {
        let unbuilt = unbuilt();
        // Served here (as chain_ for klay_): not unbuilt.
        for built in [
            "klay_blockNumber",
            "chain_blockNumber",
            "admin_addPeer",
            "personal_unlockAccount",
            "chain_subscribe",
            "eth_blockNumber",
            "eth_subscribe",
        ] {
            assert!(!unbuilt.iter().any(|n| n == built), "{built}");
        }
        for missing in [
            "klay_getStakingInfo",
            "chain_getStakingInfo",
            "governance_vote",
            "eth_resend",
            "admin_startSpamThrottler",
            "istanbul_getSnapshot",
        ] {
            assert!(unbuilt.iter().any(|n| n == missing), "{missing}");
        }
        // No method of the table is marked unbuilt.
        for m in super::super::spec::methods() {
            assert!(!unbuilt.iter().any(|n| n == m.name), "{}", m.name);
        }
    }

    #[test]
    fn klay_is_our_chain() {
        assert_eq!(our_name("klay_getBalance"), "chain_getBalance");
        assert_eq!(our_name("eth_getBalance"), "eth_getBalance");
        assert_eq!(our_name("admin_peers"), "admin_peers");
    }
}
