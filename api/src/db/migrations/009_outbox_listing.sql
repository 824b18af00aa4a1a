-- GET /admin/blockchain/transactions lists the outbox newest first, filtered or not.
CREATE INDEX chain_transactions_created ON chain_transactions (created_at DESC, id);
CREATE INDEX chain_transactions_kind_created ON chain_transactions (kind, created_at DESC);
