//! The table of every JSON-RPC method the node serves, as clients see it: names, positional
//! parameters and summaries, derived from the namespaces' own declarations
//! ([`super::Namespace::METHODS`] and `SUBSCRIPTIONS`). `chainctl` builds its subcommands, its
//! secret handling and the console's completion from it, and the man pages from those.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::method::{specs, MethodSpec};
use super::{
    admin, chain, consensus, contract, debug, eth, fees, logs, net, personal, recover, rpc, txpool,
    web3,
};

static METHODS: LazyLock<Vec<MethodSpec>> = LazyLock::new(|| {
    // Modules in alphabetical order, methods in each namespace's declared order.
    let mut v = Vec::new();
    v.extend(specs::<admin::AdminApi>());
    v.extend(specs::<chain::ChainApi>());
    v.extend(specs::<consensus::ConsensusApi>());
    v.extend(specs::<recover::RecoverApi>());
    v.extend(specs::<contract::ContractApi>());
    v.extend(specs::<logs::LogsApi>());
    v.extend(specs::<fees::FeeApi>());
    v.extend(specs::<debug::DebugApi>());
    v.extend(specs::<eth::EthApi>());
    v.extend(specs::<net::NetApi>());
    v.extend(specs::<personal::PersonalApi>());
    v.extend(specs::<rpc::RpcApi>());
    v.extend(specs::<txpool::TxpoolApi>());
    v.extend(specs::<web3::Web3Api>());
    v
});

/// Every method, grouped by module.
pub fn methods() -> &'static [MethodSpec] {
    &METHODS
}

/// The spec of `name`, if the node serves it.
pub fn find(name: &str) -> Option<&'static MethodSpec> {
    methods().iter().find(|m| m.name == name)
}

/// The module names of the table, sorted.
pub fn modules() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = methods().iter().map(MethodSpec::module).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// A module list (`--rpcapi`, `--wsapi`, the `apis` argument of `admin_startHTTP` and
/// `admin_startWS`) resolved: what the endpoint offers, and the notes to log about names of
/// the reference's modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleList {
    /// The modules of this node the endpoint offers (`rpc` is offered anyway).
    pub offered: BTreeSet<String>,
    /// One line per reference module name in the list: what it means here.
    pub warnings: Vec<String>,
}

/// Resolves the comma-separated module list `text` (entries trimmed, empty ones dropped: an
/// empty list offers only `rpc`). A module of this node is offered; a module of the reference
/// that this node does not build under its name is accepted with a warning (`klay` offers
/// `chain`, the others nothing, see [`super::reference::MODULES`]). Fails on any other name,
/// with the text `-32000` answers and `chaind` prints: the unknown names and the known ones.
pub fn resolve_modules(text: &str) -> Result<ModuleList, String> {
    let ours = modules();
    let mut list = ModuleList {
        offered: BTreeSet::new(),
        warnings: Vec::new(),
    };
    let mut unknown = Vec::new();
    for name in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        if ours.contains(&name) {
            list.offered.insert(name.to_string());
            continue;
        }
        match super::reference::MODULES.iter().find(|(m, _)| *m == name) {
            Some((_, Some(served_as))) => {
                list.offered.insert(served_as.to_string());
                list.warnings.push(format!(
                    "module {name} is the reference's name of this node's {served_as} module: {served_as} is offered"
                ));
            }
            Some((_, None)) => list.warnings.push(format!(
                "module {name} is a module of the reference node that this node does not build: ignored"
            )),
            None if !unknown.contains(&name) => unknown.push(name),
            None => {}
        }
    }
    if unknown.is_empty() {
        return Ok(list);
    }
    let reference: Vec<&str> = super::reference::MODULES.iter().map(|(m, _)| *m).collect();
    Err(format!(
        "unknown module{} {} in the module list: this node's modules are {}; the reference's {} are accepted too (klay offers chain, the others nothing)",
        if unknown.len() == 1 { "" } else { "s" },
        unknown.join(", "),
        ours.join(", "),
        reference.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use super::super::admin::{EndpointRequest, Endpoints};
    use super::super::error::Result;
    use super::super::{chain::ChainFeeds, Apis};
    use super::*;
    use crate::keystore::{unlock::Unlocked, Keystore};
    use crate::rpc::{Registry, SubscriptionLimit};

    struct NoEndpoints;
    impl Endpoints for NoEndpoints {
        fn start_http(&self, _: EndpointRequest, _: Arc<Registry>) -> Result<()> {
            Ok(())
        }
        fn stop_http(&self) -> Result<()> {
            Ok(())
        }
        fn start_ws(&self, _: EndpointRequest, _: Arc<Registry>) -> Result<()> {
            Ok(())
        }
        fn stop_ws(&self) -> Result<()> {
            Ok(())
        }
        fn running(&self) -> super::super::admin::RunningEndpoints {
            Default::default()
        }
    }

    /// The table and what the node registers come from the same declarations: every name of
    /// the table is a registered method (or the subscribe pair of a namespace with
    /// subscription kinds), and every registered method is in the table.
    #[test]
    fn the_table_is_exactly_what_the_node_registers() {
        let dir = tempfile::tempdir().unwrap();
        let ks = Arc::new(Keystore::open(dir.path().join("keystore")).unwrap());
        let unlocked = Arc::new(Unlocked::new());
        let feeds = Arc::new(ChainFeeds::default());
        let chain_api = Arc::new(chain::ChainApi::new(
            ks.clone(),
            unlocked.clone(),
            feeds.clone(),
            None,
        ));
        let contract_api = Arc::new(contract::ContractApi::new(None));
        let logs_api = Arc::new(logs::LogsApi::new(
            None,
            Arc::new(super::super::filters::Filters::default()),
        ));
        let fee_api = Arc::new(fees::FeeApi::new(None));
        let apis = Apis {
            admin: Arc::new(admin::AdminApi::new(
                dir.path().into(),
                Arc::new(NoEndpoints),
                SubscriptionLimit::default(),
            )),
            chain: chain_api.clone(),
            consensus: Arc::new(consensus::ConsensusApi::new(None, None)),
            recover: Arc::new(recover::RecoverApi::new(None)),
            contract: contract_api.clone(),
            logs: logs_api.clone(),
            eth: Arc::new(eth::EthApi::new(
                chain_api,
                contract_api,
                logs_api,
                fee_api.clone(),
                feeds,
                None,
                crate::crypto::Address([0; 20]),
            )),
            fees: fee_api,
            net: Arc::new(net::NetApi::new(1, Arc::new(AtomicBool::new(false)))),
            personal: Arc::new(personal::PersonalApi::new(ks, unlocked, false)),
            rpc: Arc::new(rpc::RpcApi),
            debug: Arc::new(debug::DebugApi::new(
                None,
                Arc::new(crate::metrics::Metrics::new(false)),
            )),
            txpool: Arc::new(txpool::TxpoolApi::new(None)),
            web3: Arc::new(web3::Web3Api),
        };
        let mut r = Registry::default();
        apis.register(&mut r);
        let mut registered: Vec<String> = r.names().iter().map(|s| s.to_string()).collect();
        for (module, _) in r.subscription_kinds() {
            for m in ["subscribe", "unsubscribe"] {
                let name = format!("{module}_{m}");
                if !registered.contains(&name) {
                    registered.push(name);
                }
            }
        }
        registered.sort();
        let mut table: Vec<String> = methods().iter().map(|m| m.name.to_string()).collect();
        table.sort();
        assert_eq!(registered, table);
        let mut unique = table.clone();
        unique.dedup();
        assert_eq!(unique, table, "a method is declared twice");
        assert_eq!(
            r.subscription_kinds(),
            [
                ("chain".to_string(), "logs".to_string()),
                ("chain".to_string(), "newHeads".to_string()),
                ("chain".to_string(), "newPendingTransactions".to_string()),
                ("eth".to_string(), "logs".to_string()),
                ("eth".to_string(), "newHeads".to_string()),
                ("eth".to_string(), "newPendingTransactions".to_string())
            ]
        );
    }

    #[test]
    fn module_lists_take_ours_and_the_references_names_only() {
        let list = resolve_modules(" chain, net ,,admin").unwrap();
        assert_eq!(
            list.offered.iter().map(String::as_str).collect::<Vec<_>>(),
            ["admin", "chain", "net"]
        );
        assert!(list.warnings.is_empty());
        assert!(resolve_modules("").unwrap().offered.is_empty());
        // The reference suite's list: klay offers chain; eth is a module of ours.
        let list =
            resolve_modules("admin,eth,klay,net,personal,debug,web3,txpool,istanbul").unwrap();
        assert_eq!(
            list.offered.iter().map(String::as_str).collect::<Vec<_>>(),
            ["admin", "chain", "debug", "eth", "net", "personal", "txpool", "web3"]
        );
        assert_eq!(
            list.warnings,
            [
                "module klay is the reference's name of this node's chain module: chain is offered",
                "module istanbul is a module of the reference node that this node does not build: ignored"
            ]
        );
        assert_eq!(
            resolve_modules("chain,nosuch,foo,nosuch").unwrap_err(),
            "unknown modules nosuch, foo in the module list: this node's modules are admin, chain, debug, eth, net, personal, rpc, txpool, web3; the reference's klay, governance, istanbul, miner, shh, mainbridge, subbridge, chaindatafetcher, clique are accepted too (klay offers chain, the others nothing)"
        );
        // Names are exact: no case folding.
        assert!(resolve_modules("Chain").is_err());
    }

    #[test]
    fn every_method_is_in_its_namespace_module_and_names_its_parameters() {
        for m in methods() {
            let (module, method) = m.name.split_once('_').expect("module_method");
            assert!(!module.is_empty() && !method.is_empty(), "{}", m.name);
            assert!(!m.summary.is_empty(), "{} has no summary", m.name);
            // Optional parameters come last.
            let first_optional = m.params.iter().position(|p| p.optional);
            if let Some(i) = first_optional {
                assert!(m.params[i..].iter().all(|p| p.optional), "{}", m.name);
            }
        }
        assert_eq!(
            modules(),
            ["admin", "chain", "debug", "eth", "net", "personal", "rpc", "txpool", "web3"]
        );
        for m in methods() {
            assert!(
                !m.returns.is_empty(),
                "{} does not say what it returns",
                m.name
            );
        }
        let sub = find("chain_subscribe").unwrap();
        assert_eq!(
            sub.summary,
            "Subscribe to newHeads or newPendingTransactions or logs (WebSocket, IPC)"
        );
    }
}
