/**
 * Custodial wallets: created here (random key, sealed by the key vault), read back as signers. The decrypted
 * signer is cached in memory only; keys never leave this module except as signatures.
 */
import { Wallet, getAddress } from "ethers";
import type pg from "pg";
import type { KeyVault } from "./keyVault.ts";

/** A pool or a client inside a transaction. */
type Queryable = Pick<pg.Pool, "query">;

export type WalletPurpose = "OPERATOR" | "ADMIN" | "DEPARTMENT" | "APPLICANT";

export class WalletStore {
  readonly #pool: pg.Pool;
  readonly #vault: KeyVault;
  readonly #signers = new Map<string, Wallet>();
  readonly #fund?: (address: string) => Promise<void>;

  /** `fund` gives a new wallet gas money (embedded chain); on a free-gas network there is none. */
  constructor(pool: pg.Pool, vault: KeyVault, fund?: (address: string) => Promise<void>) {
    this.#pool = pool;
    this.#vault = vault;
    this.#fund = fund;
  }

  /** Creates a wallet with a fresh random key, records it (nonce 0: the address is new) and funds it if needed. */
  async create(purpose: WalletPurpose, label: string | null, client: Queryable = this.#pool): Promise<string> {
    const wallet = Wallet.createRandom();
    const address = await this.import(wallet.privateKey, purpose, label, 0n, client);
    if (this.#fund) await this.#fund(address);
    return address;
  }

  /** Records an existing key (e.g. the configured operator key); no-op when the address is already known. */
  async import(privateKey: string, purpose: WalletPurpose, label: string | null, nextNonce: bigint, client: Queryable = this.#pool): Promise<string> {
    const address = new Wallet(privateKey).address.toLowerCase();
    await client.query(
      `INSERT INTO wallets (address, purpose, label, encrypted_key, next_nonce) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (address) DO NOTHING`,
      [address, purpose, label, this.#vault.seal(privateKey, address), nextNonce.toString()],
    );
    return getAddress(address);
  }

  async findByPurpose(purpose: WalletPurpose, label: string | null = null): Promise<string | undefined> {
    const { rows } = await this.#pool.query(
      `SELECT address FROM wallets WHERE purpose = $1 AND label IS NOT DISTINCT FROM $2 ORDER BY created_at LIMIT 1`,
      [purpose, label],
    );
    return rows[0] ? getAddress(rows[0].address) : undefined;
  }

  async signer(address: string): Promise<Wallet> {
    const key = address.toLowerCase();
    const cached = this.#signers.get(key);
    if (cached) return cached;
    const { rows } = await this.#pool.query(`SELECT encrypted_key FROM wallets WHERE address = $1`, [key]);
    if (!rows[0]) throw new Error(`no custodial wallet ${address}`);
    const wallet = new Wallet(this.#vault.open(rows[0].encrypted_key, key));
    this.#signers.set(key, wallet);
    return wallet;
  }

  async all(): Promise<{ address: string; purpose: WalletPurpose; nextNonce: bigint }[]> {
    const { rows } = await this.#pool.query(`SELECT address, purpose, next_nonce FROM wallets ORDER BY created_at`);
    return rows.map((r) => ({ address: getAddress(r.address), purpose: r.purpose, nextNonce: BigInt(r.next_nonce) }));
  }
}
