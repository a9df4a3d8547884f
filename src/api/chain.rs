//! `chain`: what exists of it before the chain itself: the subscription kinds, whose feeds the
//! chain will publish to. (`chain_sign` and `chain_accounts` live with `personal`, whose account
//! look-up they share.)

use std::sync::Arc;

use crate::rpc::{Feed, FeedKind, Registry};

/// The event feeds of the `chain` namespace.
pub struct ChainFeeds {
    /// New block headers (`newHeads`).
    pub new_heads: Arc<Feed>,
    /// Hashes of transactions entering the pool (`newPendingTransactions`).
    pub new_pending_transactions: Arc<Feed>,
}

impl Default for ChainFeeds {
    fn default() -> Self {
        ChainFeeds {
            new_heads: Feed::new(),
            new_pending_transactions: Feed::new(),
        }
    }
}

impl ChainFeeds {
    pub fn register(&self, r: &mut Registry) {
        r.register_subscription(
            "chain",
            "newHeads",
            Arc::new(FeedKind(self.new_heads.clone())),
        );
        r.register_subscription(
            "chain",
            "newPendingTransactions",
            Arc::new(FeedKind(self.new_pending_transactions.clone())),
        );
    }
}
