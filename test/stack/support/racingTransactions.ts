/**
 * Two registrations of one department code recorded in the outbox back to back and not broadcast, as if the API
 * stopped right after recording: both valid when signed, the second reverts once the first is mined (a race
 * between two writers). `reconcile()` then sends them. Options shape the second record (its kind, its request,
 * extra rows written with it) and age them so the reconciler picks them up at once.
 */
import { randomUUID } from "node:crypto";
import { keccak256, Wallet } from "ethers";
import type pg from "pg";
import { NonceSequencer } from "../../../api/src/chain/nonceSequencer.ts";
import { b32, registry, type Driver } from "./platformDriver.ts";
import { current } from "./stackFixture.ts";

export interface RacingOptions {
  code: string;
  /** Kind and request of the second (reverting) record; default REGISTER_DEPARTMENT, none. */
  secondKind?: string;
  secondRequestId?: string;
  /** Extra rows written with the second record, in its database transaction. */
  withSecond?: (client: pg.PoolClient, txId: string, hash: string) => Promise<void>;
  /** Record them as created a minute ago, so reconciliation does not wait for them (default false). */
  aged?: boolean;
}

/** Returns the two transaction hashes, in nonce order. */
export async function recordRacingTransactions(driver: Driver, options: RacingOptions): Promise<string[]> {
  // Registrations are governance's: its key, as the stack gives it to the API.
  const { core, governance: admin } = driver;
  const wallet = Wallet.createRandom();
  const proof = await driver.keyProof(options.code, wallet.address, 0, wallet);
  const data = registry.encodeFunctionData("registerDepartment", [b32(options.code), wallet.address, 0, proof]);
  const signer = await core.wallets.signer(admin);
  await core.wallets.catchUpNonce(admin);
  const block = await core.provider.getBlock("latest");
  const hashes: string[] = [];
  for (let i = 0; i < 2; i++) {
    await new NonceSequencer(core.pool, (...args) => core.gateway.recordNonceFiller(...args)).run(admin, {
      record: async ({ nonce, client }) => {
        const raw = await signer.signTransaction({
          type: 2,
          chainId: current().config.chainId,
          nonce: Number(nonce),
          to: driver.addresses.ApprovalRegistry,
          data,
          gasLimit: 300_000n,
          maxFeePerGas: block!.baseFeePerGas! * 3n,
          maxPriorityFeePerGas: 1n,
        });
        const id = randomUUID();
        const hash = keccak256(raw);
        hashes.push(hash);
        const second = i === 1;
        await client.query(
          `INSERT INTO chain_transactions (id, kind, status, from_address, nonce, to_address, data, raw_tx, tx_hash, gas_limit, request_id, created_at)
           VALUES ($1, $2, 'PENDING', $3, $4, $5, $6, $7, $8, 300000, $9, now() - $10::interval)`,
          [
            id,
            (second && options.secondKind) || "REGISTER_DEPARTMENT",
            admin.toLowerCase(),
            nonce.toString(),
            driver.addresses.ApprovalRegistry.toLowerCase(),
            data,
            raw,
            hash,
            (second && options.secondRequestId) || null,
            options.aged ? "1 minute" : "0 seconds",
          ],
        );
        if (second && options.withSecond) await options.withSecond(client, id, hash);
        return { id, nonce };
      },
      broadcast: async () => {},
    });
  }
  return hashes;
}
