/**
 * A governance key held by the API (DEFAULT_ADMIN_ROLE: departments, their wallet changes, workflow versions), only
 * where one key governs: the embedded development chain's deployer, or GOVERNANCE_PRIVATE_KEY set on purpose.
 * Its transactions are signed with that key in memory whichever signer holds the other wallets (the key vault or a
 * remote signer); its row in the wallets table sequences its nonces like any other wallet's.
 */
import { Wallet, getAddress } from "ethers";
import type { SignableTransaction, TransactionSigner, TypedDataToSign } from "./transactionSigner.ts";
import type { WalletStore } from "./walletStore.ts";

/** `signer`, signing `privateKey`'s transactions itself. */
export function withGovernanceKey(signer: TransactionSigner, privateKey: string): TransactionSigner {
  const governance = new Wallet(privateKey);
  const isGovernance = (address: string) => address.toLowerCase() === governance.address.toLowerCase();
  return {
    mode: signer.mode,
    addresses: () => signer.addresses(),
    ensureKey: (purpose, label, options) => signer.ensureKey(purpose, label, options),
    signTransaction: (tx: SignableTransaction) => {
      if (!isGovernance(tx.from)) return signer.signTransaction(tx);
      const { from: _from, nonce, ...fields } = tx;
      return governance.signTransaction({ ...fields, nonce: Number(nonce) });
    },
    signTypedData: (address: string, typed: TypedDataToSign) =>
      isGovernance(address)
        ? governance.signTypedData(typed.domain, typed.types, typed.message)
        : signer.signTypedData(address, typed),
  };
}

/**
 * The governance wallet, recorded for nonce sequencing (its key sealed like the vault's), its next nonce caught up
 * with the chain: the same key deployed the contracts and may be used outside the API.
 */
export async function governanceWallet(wallets: WalletStore, privateKey: string): Promise<string> {
  const address = await wallets.import(privateKey, "GOVERNANCE", null, 0n);
  await wallets.catchUpNonce(address);
  return getAddress(address);
}

/** The governance key as use cases see it: its address, and a wallet ready to send (nonce caught up first). */
export interface GovernanceKey {
  address: string;
  ready(): Promise<string>;
}

export function governanceKey(wallets: WalletStore, address: string): GovernanceKey {
  return {
    address,
    ready: async () => {
      await wallets.catchUpNonce(address);
      return address;
    },
  };
}
