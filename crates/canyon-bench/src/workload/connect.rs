//! The connection storm: each transaction is a new TCP connection, the MySQL
//! handshake and authentication, one `SELECT 1`, and COM_QUIT — the cost a
//! server pays for clients that do not pool connections (PHP-style).

use super::{ConnectionMode, PrepareStream, StatementSpec, StmtClass, Txn, TxnSource, Workload};

/// The connect workload.
pub struct Connect {
    statements: Vec<StatementSpec>,
}

impl Connect {
    /// The workload.
    pub fn new() -> Connect {
        Connect {
            statements: vec![StatementSpec::new("SELECT 1", StmtClass::Read)],
        }
    }
}

impl Default for Connect {
    fn default() -> Self {
        Connect::new()
    }
}

impl Workload for Connect {
    fn name(&self) -> &'static str {
        "connect"
    }

    fn params(&self) -> serde_json::Value {
        serde_json::json!({ "query": "SELECT 1" })
    }

    fn database(&self) -> Option<&str> {
        None
    }

    fn statements(&self) -> &[StatementSpec] {
        &self.statements
    }

    fn connection_mode(&self) -> ConnectionMode {
        ConnectionMode::PerTransaction
    }

    fn prepare(&self, _shard: usize, _shards: usize) -> Vec<PrepareStream> {
        Vec::new()
    }

    fn cleanup(&self) -> Vec<String> {
        Vec::new()
    }

    fn client(&self, client: u64, _seed: u64, shards: usize) -> Box<dyn TxnSource> {
        Box::new(ConnectClient {
            shard: (client as usize) % shards.max(1),
        })
    }
}

/// Spreads clients over the shards round-robin (client `i` to shard `i mod n`).
struct ConnectClient {
    shard: usize,
}

impl TxnSource for ConnectClient {
    fn next_txn(&mut self, txn: &mut Txn) {
        txn.shard = self.shard;
        txn.push(0, Vec::new());
    }
}
