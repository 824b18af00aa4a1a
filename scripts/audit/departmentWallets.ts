/**
 * Which wallet spoke for which department at any point of the chain, replayed from DepartmentRegistered and
 * DepartmentWalletRotated. A decision is the department's only if its transaction was sent by the wallet
 * registered at that point: the current wallet (departmentById) would wrongly fail every decision made before a
 * rotation, and wrongly pass one made by the new wallet before it was registered.
 */
import { decodeBytes32String, getAddress } from "ethers";
import { isBefore, type ChainEvent } from "./logReader.ts";

interface WalletPeriod {
  wallet: string;
  /** The event that made this wallet the department's. */
  since: ChainEvent;
}

export class DepartmentWallets {
  readonly #codes = new Map<number, string>();
  readonly #periods = new Map<number, WalletPeriod[]>();

  /** `events`: DepartmentRegistered and DepartmentWalletRotated, in chain order. */
  constructor(events: ChainEvent[]) {
    for (const event of events) {
      const departmentId = Number(event.args.departmentId);
      if (event.name === "DepartmentRegistered") this.#codes.set(departmentId, codeText(event.args.code));
      const periods = this.#periods.get(departmentId) ?? [];
      periods.push({ wallet: getAddress(event.args.wallet), since: event });
      this.#periods.set(departmentId, periods);
    }
  }

  codeOf(departmentId: number): string | undefined {
    return this.#codes.get(departmentId);
  }

  /** The department's wallet just before `event` was applied (undefined: not registered yet). */
  walletAt(departmentId: number, event: ChainEvent): string | undefined {
    let wallet: string | undefined;
    for (const period of this.#periods.get(departmentId) ?? []) {
      if (!isBefore(period.since, event)) break;
      wallet = period.wallet;
    }
    return wallet;
  }

  /** The wallet after every rotation: must equal `departmentById(id).wallet` at the audited block. */
  latestWallet(departmentId: number): string | undefined {
    return this.#periods.get(departmentId)?.at(-1)?.wallet;
  }
}

/** A department code as registered (bytes32 text); the raw word if it is not text. */
export function codeText(word: string): string {
  try {
    return decodeBytes32String(word);
  } catch {
    return word;
  }
}
