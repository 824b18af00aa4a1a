/** The embedded default signer: keys created at random and sealed in the wallets table by the key vault. */
import { SignerError, WalletChoiceError } from "./chainErrors.ts";
import type { SignableTransaction, TransactionSigner, TypedDataToSign } from "./transactionSigner.ts";
import type { WalletPurpose, WalletStore } from "./walletStore.ts";

export class LocalVaultSigner implements TransactionSigner {
  readonly mode = "local" as const;
  readonly #wallets: WalletStore;

  constructor(wallets: WalletStore) {
    this.#wallets = wallets;
  }

  async addresses(): Promise<string[]> {
    return (await this.#wallets.all()).filter((w) => w.signer === "local").map((w) => w.address);
  }

  async signTransaction(tx: SignableTransaction): Promise<string> {
    const { from, nonce, ...fields } = tx;
    // One signer per process: a wallet recorded by a process with a remote signer has no key in the vault.
    if (!(await this.#wallets.hasVaultKey(from))) {
      throw new SignerError(
        "refused",
        `This API process signs with its key vault, which holds no key for ${from} (a remote signer's key: SIGNER=remote signs for it); nothing was recorded`,
        { walletAddress: from },
      );
    }
    const wallet = await this.#wallets.signer(from);
    return wallet.signTransaction({ ...fields, nonce: Number(nonce) });
  }

  async signTypedData(address: string, typed: TypedDataToSign): Promise<string> {
    if (!(await this.#wallets.hasVaultKey(address))) {
      throw new SignerError("refused", `The key vault holds no key for ${address}; nothing was signed`, {
        walletAddress: address,
      });
    }
    const wallet = await this.#wallets.signer(address);
    return wallet.signTypedData(typed.domain, typed.types, typed.message);
  }

  /** Always a fresh key: the vault makes keys, it is never handed one over HTTP. */
  async ensureKey(purpose: WalletPurpose, label: string | null, options: { address?: string } = {}): Promise<string> {
    if (options.address) {
      throw new WalletChoiceError(
        "walletAddress can be chosen only when the API signs with a remote signer (SIGNER=remote); the key vault creates its own keys",
      );
    }
    return this.#wallets.create(purpose, label);
  }
}
