/**
 * The status lists' anchors against the chain's own licence statuses. For every list holding an issued licence (or
 * anchored), the three lists are rebuilt here from `validityOf` of each issued licence at the audited block — the
 * W3C revocation and suspension bitstrings (1 bit, index 0 the left-most bit of byte 0) and the IETF Token Status List
 * (2 bits, index 0 the low bits of byte 0: 1 revoked, 2 suspended) — and their SHA-256 compared with the list's latest
 * anchor (`statusListAnchorOf`, which must also be its last StatusListAnchored event). Written from the specifications,
 * not imported from the API: the tool checks the platform, so it shares none of its code.
 */
import { createHash } from "node:crypto";
import { LicenceTokenStatus } from "../../abis/index.ts";
import { STATUS_NAMES, type ChainRef, type StatusListAudit } from "./auditRecord.ts";
import type { ContractViews } from "./contractViews.ts";
import type { ChainEvent, LogReader } from "./logReader.ts";

/** Entries per list: list n holds token ids n × 131,072 … (n + 1) × 131,072 − 1, each at id mod 131,072. */
const LIST_SIZE = 131_072;
/** The list a licence's status is in. */
export const statusListOf = (tokenId: number | bigint) => Number(BigInt(tokenId) / BigInt(LIST_SIZE));

const { Suspended: SUSPENDED, Revoked: REVOKED } = LicenceTokenStatus;
const DIGESTS = ["revocation", "suspension", "tokenStatus"] as const;
type Digests = Record<(typeof DIGESTS)[number], string>;

/** `onlyList`: audit that list alone (one licence's audit); otherwise every list in use. */
export async function auditStatusLists(
  reader: LogReader,
  views: ContractViews,
  asOfBlock: number,
  timeOf: (block: number) => Promise<string>,
  onlyList?: number,
): Promise<{ statusLists: StatusListAudit[]; findings: string[]; notes: string[] }> {
  const events = await reader.statusListEvents();
  const listOf = (tokenId: unknown) => statusListOf(tokenId as bigint);
  const issued = events.filter((e) => e.name === "LicenceIssued").map((e) => BigInt(e.args.tokenId));
  const lists = [
    ...new Set([
      ...issued.map(listOf),
      ...events.filter((e) => e.name === "StatusListAnchored").map((e) => Number(e.args.list)),
    ]),
  ]
    .filter((list) => onlyList === undefined || list === onlyList)
    .sort((a, b) => a - b);

  const statusLists: StatusListAudit[] = [];
  const findings: string[] = [];
  const notes: string[] = [];
  for (const list of lists) {
    const tokens = issued.filter((id) => listOf(id) === list);
    const statuses = await Promise.all(
      tokens.map(async (tokenId) => ({
        tokenId,
        status: Number((await views.call("LicenceToken", "validityOf", tokenId))[1]),
      })),
    );
    const suspended = statuses.filter((s) => s.status === SUSPENDED).map((s) => Number(s.tokenId));
    const revoked = statuses.filter((s) => s.status === REVOKED).map((s) => Number(s.tokenId));
    const expected = digestsOf(statuses);

    const [view] = await views.call("LicenceToken", "statusListAnchorOf", list);
    const sequence = Number(view.sequence);
    const anchored = events.filter((e) => e.name === "StatusListAnchored" && Number(e.args.list) === list).at(-1);
    const anchor =
      sequence === 0
        ? null
        : {
            sequence,
            revocation: String(view.revocation),
            suspension: String(view.suspension),
            tokenStatus: String(view.tokenStatus),
            ...(await refOf(anchored, Number(view.blockNumber), timeOf)),
          };
    const differing = anchor ? DIGESTS.filter((d) => anchor[d] !== expected[d]) : [];
    statusLists.push({
      list,
      issued: tokens.length,
      suspended,
      revoked,
      digests: expected,
      anchor,
      matches: !!anchor && differing.length === 0,
    });

    const at = `at block ${asOfBlock}`;
    if (anchor && !agrees(anchored, anchor))
      findings.push(
        `statusListAnchorOf(${list}) is anchor #${sequence} of block ${anchor.blockNumber} but the list's last StatusListAnchored event is ${anchored ? `#${anchored.args.sequence} in block ${anchored.blockNumber}` : "missing"}`,
      );
    const change = lastChange(events, list, listOf);
    const changed = change
      ? `; its last change of status was token ${change.args.tokenId} to ${STATUS_NAMES[Number(change.args.to)]} in block ${change.blockNumber}, ${asOfBlock - change.blockNumber} block(s) before the audited one`
      : "";
    if (!anchor && suspended.length + revoked.length > 0)
      findings.push(
        `status list ${list} marks ${suspended.length} suspended and ${revoked.length} revoked licence(s) ${at} but was never anchored${changed}`,
      );
    else if (!anchor)
      notes.push(
        `status list ${list} holds ${tokens.length} issued licence(s), all valid or expired, and has no anchor yet: a verifier finds nothing on chain to check a served list against`,
      );
    else if (differing.length > 0)
      findings.push(
        `status list ${list}'s anchor #${sequence} (block ${anchor.blockNumber}) does not match its licences' statuses ${at}: ${differing.map((d) => `${d} anchored ${anchor[d]}, statuses give ${expected[d]}`).join("; ")}${changed}`,
      );
  }
  return { statusLists, findings, notes };
}

/** The three decoded lists' SHA-256, from each issued licence's status. */
function digestsOf(statuses: { tokenId: bigint; status: number }[]): Digests {
  const revocation = new Uint8Array(LIST_SIZE / 8);
  const suspension = new Uint8Array(LIST_SIZE / 8);
  const tokenStatus = new Uint8Array(LIST_SIZE / 4);
  for (const { tokenId, status } of statuses) {
    const index = Number(tokenId % BigInt(LIST_SIZE));
    const bit = 0x80 >> (index % 8);
    const slot = (index % 4) * 2;
    if (status === REVOKED) {
      revocation[index >> 3] |= bit;
      tokenStatus[index >> 2] |= 1 << slot;
    } else if (status === SUSPENDED) {
      suspension[index >> 3] |= bit;
      tokenStatus[index >> 2] |= 2 << slot;
    }
  }
  const sha256 = (bytes: Uint8Array) => `0x${createHash("sha256").update(bytes).digest("hex")}`;
  return { revocation: sha256(revocation), suspension: sha256(suspension), tokenStatus: sha256(tokenStatus) };
}

/** The view's anchor is the list's last event: same sequence, same digests. */
function agrees(event: ChainEvent | undefined, anchor: Digests & { sequence: number }): boolean {
  return (
    !!event &&
    Number(event.args.sequence) === anchor.sequence &&
    DIGESTS.every((d) => String(event.args[d]).toLowerCase() === anchor[d].toLowerCase())
  );
}

async function refOf(
  event: ChainEvent | undefined,
  blockNumber: number,
  timeOf: (block: number) => Promise<string>,
): Promise<ChainRef> {
  return { transactionHash: event?.transactionHash ?? "", blockNumber, timestamp: await timeOf(blockNumber) };
}

/** The list's last change of status that moves a bit: a suspension, a revocation, a reinstatement. */
function lastChange(events: ChainEvent[], list: number, listOf: (tokenId: unknown) => number) {
  const marks = (status: unknown) => Number(status) === SUSPENDED || Number(status) === REVOKED;
  return events
    .filter(
      (e) =>
        e.name === "LicenceStatusChanged" &&
        listOf(e.args.tokenId) === list &&
        (marks(e.args.from) || marks(e.args.to)),
    )
    .at(-1);
}
