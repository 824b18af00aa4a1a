/**
 * Custodial department wallets, for use cases: the configured signer (key vault or remote signer) makes or picks
 * the key and records the wallet for nonce sequencing; the use case only learns its address.
 */
import type { TransactionSigner, TypedDataToSign } from "./transactionSigner.ts";

export interface DepartmentWallets {
  /**
   * The custodial wallet of department `code`: a new key of the vault, or a key of the remote signer (`address`
   * if given, else its first unused key).
   */
  walletFor(code: string, options?: { address?: string }): Promise<string>;
  /** The custodial wallet's EIP-712 signature of `typed` (its DepartmentKey proof of possession). */
  sign(wallet: string, typed: TypedDataToSign): Promise<string>;
}

export function departmentWallets(signer: TransactionSigner): DepartmentWallets {
  return {
    walletFor: (code, options = {}) => signer.ensureKey("DEPARTMENT", code, options),
    sign: (wallet, typed) => signer.signTypedData(wallet, typed),
  };
}
