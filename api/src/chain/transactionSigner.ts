/**
 * What the chain gateway signs with: the embedded key vault (`LocalVaultSigner`) or a remote JSON-RPC signer
 * (`RemoteSigner`: Web3Signer, EthSigner, Clef, with the keys in an HSM or KMS behind them), chosen by `SIGNER`.
 * The gateway keeps nonces, the outbox and reconciliation; a signer only turns a complete transaction into its
 * signed bytes, whatever contract function it calls.
 */
import type { WalletPurpose } from "./walletStore.ts";

export type SignerMode = "local" | "remote";

/** Gas price fields: legacy (free-gas Besu) or EIP-1559. */
export type FeeFields = { type: 0; gasPrice: bigint } | { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

/** A transaction with every field set: the signer adds nothing, and must change nothing. */
export type SignableTransaction = FeeFields & {
  from: string;
  /** null: a contract creation. */
  to: string | null;
  data: string;
  nonce: bigint;
  gasLimit: bigint;
  chainId: number;
};

/** EIP-712 typed data as ethers takes it (the domain without EIP712Domain in `types`). */
export interface TypedDataToSign {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

export interface TransactionSigner {
  readonly mode: SignerMode;
  /** Addresses this signer holds keys for (checksummed). */
  addresses(): Promise<string[]>;
  /** The signed raw transaction (0x hex), exactly the fields given, signed by `from`. */
  signTransaction(tx: SignableTransaction): Promise<string>;
  /**
   * The 65-byte EIP-712 signature of `typed` by `address` (a department wallet's proof that it holds its key): the
   * vault signs with the key it sealed, a remote signer with eth_signTypedData_v4.
   */
  signTypedData(address: string, typed: TypedDataToSign): Promise<string>;
  /**
   * A wallet for `purpose` (and `label`, e.g. the department code), recorded for nonce sequencing: a new local key,
   * or a key of the remote signer (`address` chosen by the caller, else the first one no wallet uses yet).
   */
  ensureKey(purpose: WalletPurpose, label: string | null, options?: { address?: string }): Promise<string>;
}
