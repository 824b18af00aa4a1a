/**
 * Custodial wallets: one row per address the platform signs from (its purpose, label and next nonce). A local
 * wallet's key is created here (random key, sealed by the key vault) and read back as a signer, the decrypted
 * signer cached in memory only; keys never leave this module except as signatures. A remote wallet's key lives in
 * the remote signer: its row holds no key (migration 020).
 */
import { Wallet, getAddress } from "ethers";
import type pg from "pg";
import type { KeyVault } from "./keyVault.ts";

/** A pool or a client inside a transaction. */
type Queryable = Pick<pg.Pool, "query">;

export type WalletPurpose = "OPERATOR" | "ADMIN" | "GOVERNANCE" | "DEPARTMENT" | "APPLICANT";

export class WalletStore {
  readonly #pool: pg.Pool;
  readonly #vault: KeyVault;
  readonly #signers = new Map<string, Wallet>();
  readonly #fund?: (address: string) => Promise<void>;
  readonly #chainNonce?: (address: string) => Promise<bigint>;

  /**
   * `fund` gives a new wallet gas money (embedded chain); on a free-gas network there is none. `chainNonce` reads a
   * remote key's pending nonce on chain: unlike a fresh local key, it may have been used before it was recorded.
   */
  constructor(
    pool: pg.Pool,
    vault: KeyVault,
    fund?: (address: string) => Promise<void>,
    chainNonce?: (address: string) => Promise<bigint>,
  ) {
    this.#pool = pool;
    this.#vault = vault;
    this.#fund = fund;
    this.#chainNonce = chainNonce;
  }

  /** Creates a wallet with a fresh random key, records it (nonce 0: the address is new) and funds it if needed. */
  async create(purpose: WalletPurpose, label: string | null, client: Queryable = this.#pool): Promise<string> {
    const wallet = Wallet.createRandom();
    const address = await this.import(wallet.privateKey, purpose, label, 0n, client);
    if (this.#fund) await this.#fund(address);
    return address;
  }

  /** Records an existing key (e.g. the configured operator key); no-op when the address is already known. */
  async import(
    privateKey: string,
    purpose: WalletPurpose,
    label: string | null,
    nextNonce: bigint,
    client: Queryable = this.#pool,
  ): Promise<string> {
    const address = new Wallet(privateKey).address.toLowerCase();
    await client.query(
      `INSERT INTO wallets (address, purpose, label, encrypted_key, next_nonce) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (address) DO NOTHING`,
      [address, purpose, label, this.#vault.seal(privateKey, address), nextNonce.toString()],
    );
    return getAddress(address);
  }

  /**
   * Records a wallet whose key a remote signer holds (no key here), funds it if it is new. Idempotent for the same
   * purpose and label; an address already recorded for anything else is refused (undefined), never re-purposed.
   */
  async recordRemote(address: string, purpose: WalletPurpose, label: string | null): Promise<string | undefined> {
    const key = address.toLowerCase();
    const nextNonce = this.#chainNonce ? await this.#chainNonce(key) : 0n;
    const inserted = await this.#pool.query(
      `INSERT INTO wallets (address, purpose, label, signer, encrypted_key, next_nonce) VALUES ($1, $2, $3, 'remote', NULL, $4)
       ON CONFLICT (address) DO NOTHING`,
      [key, purpose, label, nextNonce.toString()],
    );
    if (inserted.rowCount === 0) {
      const { rows } = await this.#pool.query(`SELECT purpose, label, signer FROM wallets WHERE address = $1`, [key]);
      const same = rows[0] && rows[0].purpose === purpose && rows[0].label === label && rows[0].signer === "remote";
      return same ? getAddress(key) : undefined;
    }
    if (this.#fund) await this.#fund(key);
    return getAddress(key);
  }

  /**
   * Moves a wallet's next nonce up to its pending count on chain: a key also used outside the API (the development
   * chain's deployer, which governs there) may have sent transactions the outbox never saw.
   */
  async catchUpNonce(address: string): Promise<void> {
    if (!this.#chainNonce) return;
    const onChain = await this.#chainNonce(address.toLowerCase());
    await this.#pool.query(`UPDATE wallets SET next_nonce = GREATEST(next_nonce, $2) WHERE address = $1`, [
      address.toLowerCase(),
      onChain.toString(),
    ]);
  }

  /** Every recorded address, lower-case (to tell a remote signer's unused keys from used ones). */
  async recordedAddresses(): Promise<Set<string>> {
    const { rows } = await this.#pool.query(`SELECT address FROM wallets`);
    return new Set(rows.map((r) => r.address as string));
  }

  async findByPurpose(purpose: WalletPurpose, label: string | null = null): Promise<string | undefined> {
    const { rows } = await this.#pool.query(
      `SELECT address FROM wallets WHERE purpose = $1 AND label IS NOT DISTINCT FROM $2 ORDER BY created_at LIMIT 1`,
      [purpose, label],
    );
    return rows[0] ? getAddress(rows[0].address) : undefined;
  }

  async hasVaultKey(address: string): Promise<boolean> {
    if (this.#signers.has(address.toLowerCase())) return true;
    const { rows } = await this.#pool.query(
      `SELECT encrypted_key IS NOT NULL AS sealed FROM wallets WHERE address = $1`,
      [address.toLowerCase()],
    );
    return rows[0]?.sealed === true;
  }

  async signer(address: string): Promise<Wallet> {
    const key = address.toLowerCase();
    const cached = this.#signers.get(key);
    if (cached) return cached;
    const { rows } = await this.#pool.query(`SELECT encrypted_key FROM wallets WHERE address = $1`, [key]);
    if (!rows[0]?.encrypted_key) throw new Error(`no custodial wallet ${address} with a key in the vault`);
    const wallet = new Wallet(this.#vault.open(rows[0].encrypted_key, key));
    this.#signers.set(key, wallet);
    return wallet;
  }

  async all(): Promise<{ address: string; purpose: WalletPurpose; signer: "local" | "remote"; nextNonce: bigint }[]> {
    const { rows } = await this.#pool.query(
      `SELECT address, purpose, signer, next_nonce FROM wallets ORDER BY created_at`,
    );
    return rows.map((r) => ({
      address: getAddress(r.address),
      purpose: r.purpose,
      signer: r.signer,
      nextNonce: BigInt(r.next_nonce),
    }));
  }
}
