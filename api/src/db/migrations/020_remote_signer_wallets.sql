-- Wallets whose key lives in a remote signer (SIGNER=remote: Web3Signer, EthSigner, Clef, an HSM or KMS behind
-- them): the row still sequences the wallet's nonces and anchors its outbox rows, but holds no key.
ALTER TABLE wallets ADD COLUMN signer text NOT NULL DEFAULT 'local' CHECK (signer IN ('local', 'remote'));
ALTER TABLE wallets ALTER COLUMN encrypted_key DROP NOT NULL;
-- A local wallet always has its sealed key; a remote one never has any key here.
ALTER TABLE wallets ADD CONSTRAINT wallets_key_where_signed CHECK ((signer = 'local') = (encrypted_key IS NOT NULL));
