//! The table of every JSON-RPC method the node serves, as clients see it: names, positional
//! parameters and summaries, derived from the namespaces' own declarations
//! ([`super::Namespace::METHODS`] and `SUBSCRIPTIONS`). `chainctl` builds its subcommands, its
//! secret handling and the console's completion from it, and the man pages from those.

use std::sync::LazyLock;

use super::method::{specs, MethodSpec};
use super::{
    admin, chain, consensus, contract, debug, logs, net, personal, recover, rpc, txpool, web3,
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
    v.extend(specs::<debug::DebugApi>());
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
    }

    /// The table and what the node registers come from the same declarations: every name of
    /// the table is a registered method (or the subscribe pair of a namespace with
    /// subscription kinds), and every registered method is in the table.
    #[test]
    fn the_table_is_exactly_what_the_node_registers() {
        let dir = tempfile::tempdir().unwrap();
        let ks = Arc::new(Keystore::open(dir.path().join("keystore")).unwrap());
        let unlocked = Arc::new(Unlocked::new());
        let apis = Apis {
            admin: Arc::new(admin::AdminApi::new(
                dir.path().into(),
                Arc::new(NoEndpoints),
                SubscriptionLimit::default(),
            )),
            chain: Arc::new(chain::ChainApi::new(
                ks.clone(),
                unlocked.clone(),
                Arc::new(ChainFeeds::default()),
                None,
            )),
            consensus: Arc::new(consensus::ConsensusApi::new(None, None)),
            recover: Arc::new(recover::RecoverApi::new(None)),
            contract: Arc::new(contract::ContractApi::new(None)),
            logs: Arc::new(logs::LogsApi::new(
                None,
                Arc::new(super::super::filters::Filters::default()),
            )),
            net: Arc::new(net::NetApi::new(1, Arc::new(AtomicBool::new(false)))),
            personal: Arc::new(personal::PersonalApi::new(ks, unlocked, false)),
            rpc: Arc::new(rpc::RpcApi),
            debug: Arc::new(debug::DebugApi::new(None)),
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
                ("chain".to_string(), "newPendingTransactions".to_string())
            ]
        );
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
            ["admin", "chain", "debug", "net", "personal", "rpc", "txpool", "web3"]
        );
        let sub = find("chain_subscribe").unwrap();
        assert_eq!(
            sub.summary,
            "Subscribe to newHeads or newPendingTransactions or logs (WebSocket, IPC)"
        );
    }
}
