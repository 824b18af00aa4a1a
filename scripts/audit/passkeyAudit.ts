/**
 * Decisions signed by a department's reviewers' passkeys (a DepartmentPasskeyAccount as the department's wallet),
 * verified by the auditor itself with node:crypto, by the account's rules, against the reviewers and threshold
 * replayed from its events; the account's own EIP-1271 answer disagreeing with that is a finding. Origin and RP ID
 * hash, which the chain does not check, are reported (and compared with `--expect-origin`). An account is
 * recognised by what it answers, not by its code, so that an impostor answering like one is still verified here.
 */
import { createHash, createPublicKey, verify } from "node:crypto";
import {
  AbiCoder,
  Contract,
  Interface,
  dataLength,
  getAddress,
  getBytes,
  hexlify,
  keccak256,
  type JsonRpcProvider,
} from "ethers";
import { DepartmentPasskeyAccountAbi } from "../../abis/index.ts";
import { isBefore, type ChainEvent, type ChainPosition, type LogReader } from "./logReader.ts";
import { creationBlock } from "./startBlock.ts";

/**
 * keccak256 of DepartmentPasskeyAccount's runtime code as compiled from the reviewed sources
 * (artifacts/contracts/DepartmentPasskeyAccount.sol; test/audit/passkeyDecisions.test.ts checks it is current).
 */
export const REVIEWED_PASSKEY_ACCOUNT_CODE_HASH = "0xcc540ae4dd0202820b51fedf104fde0d159331173bacecebe82ce036c7feb88f";

/** The P-256 group order n: the account refuses a signature whose s is above n / 2. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
/** authenticatorData flags: User Present, User Verified, Backup Eligible, Backup State. */
const [FLAG_UP, FLAG_UV, FLAG_BE, FLAG_BS] = [0x01, 0x04, 0x08, 0x10];
const ASSERTION_TUPLE =
  "tuple(bytes32 r,bytes32 s,uint256 challengeIndex,uint256 typeIndex,bytes authenticatorData,string clientDataJSON)";

export const passkeyAccountAbi = new Interface(DepartmentPasskeyAccountAbi as never);

/** One WebAuthn assertion, in the account's ABI layout (OpenZeppelin's WebAuthn.WebAuthnAuth). */
export type PasskeyAssertion = {
  r: string;
  s: string;
  challengeIndex: bigint;
  typeIndex: bigint;
  authenticatorData: string;
  clientDataJSON: string;
};

/** What the auditor makes of one assertion, checked against the key and the expected challenge. */
export interface AssertionCheck {
  /** The origin in clientDataJSON (null when it has none or is not JSON). */
  origin: string | null;
  /** The first 32 bytes of authenticatorData: sha256 of the RP ID the authenticator signed for. */
  rpIdHash: string;
  /** Why the assertion is not a valid assertion of the key over the challenge; empty when it is. */
  problems: string[];
}

/** One reviewer's assertion in a decision, as reported. */
export interface PasskeyAssertionAudit {
  /** keccak256 of the 64-byte key qx ‖ qy, as the account names its reviewers. */
  reviewerId: string;
  origin: string | null;
  rpIdHash: string;
  /** The assertion is valid for the key over the decision's digest, and the key was a reviewer then. */
  verified: boolean;
}

/** One change of an account's reviewers or threshold, from its events. */
export type ReviewerChangeAudit = {
  kind: "ADDED" | "REMOVED" | "THRESHOLD";
  reviewerId?: string;
  key?: string;
  threshold?: number;
  transactionHash: string;
  blockNumber: number;
};

/** A department's passkey account: its reviewers now and how they came to be. */
export interface PasskeyDepartmentAudit {
  departmentCode: string;
  account: string;
  /** The runtime code is the reviewed DepartmentPasskeyAccount's. */
  reviewedCode: boolean;
  reviewers: string[];
  threshold: number;
  history: ReviewerChangeAudit[];
  /** The key proofs registering or proposing the account for the department: its reviewers' consent, verified. */
  keyProofs: KeyProofAudit[];
}

/** A key proof (DepartmentKey) made by a passkey account, each reviewer's assertion as the auditor verified it. */
export type KeyProofAudit = {
  departmentCode: string;
  transactionHash: string;
  blockNumber: number;
  passkeys: PasskeyAssertionAudit[];
};

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

/** What every assertion must be made for (`--expect-origin URL`): its origin, and sha256 of its host (the RP ID). */
export type ExpectedOrigin = ReturnType<typeof expectedOrigin>;
export function expectedOrigin(url: string) {
  const parsed = new URL(url);
  return { origin: parsed.origin, rpIdHash: hexlify(sha256(parsed.hostname)) };
}

/**
 * Whether `assertion` is the passkey `key`'s (64 bytes qx ‖ qy) WebAuthn assertion over `challenge` (32 bytes),
 * by the rules the account applies, checked with node:crypto. The JSON is read both where the indexes point (as
 * the account reads it) and parsed (as a relying party reads it): a clientDataJSON whose two readings differ is
 * not accepted.
 */
export function checkAssertion(key: string, challenge: string, assertion: PasskeyAssertion): AssertionCheck {
  const problems: string[] = [];
  const authenticatorData = Buffer.from(getBytes(assertion.authenticatorData));
  const rpIdHash = hexlify(authenticatorData.subarray(0, 32));
  if (authenticatorData.length < 37) problems.push(`authenticatorData is ${authenticatorData.length} bytes (< 37)`);
  else {
    const flags = authenticatorData[32];
    if (!(flags & FLAG_UP)) problems.push("the User Present flag is not set");
    if (!(flags & FLAG_UV)) problems.push("the User Verified flag is not set");
    if (flags & FLAG_BS && !(flags & FLAG_BE)) problems.push("backed up without being backup eligible");
  }

  const clientData = assertion.clientDataJSON;
  const encodedChallenge = Buffer.from(getBytes(challenge)).toString("base64url");
  const at = (index: bigint, expected: string) =>
    index <= BigInt(Buffer.byteLength(clientData)) &&
    Buffer.from(clientData)
      .subarray(Number(index), Number(index) + Buffer.byteLength(expected))
      .toString() === expected;
  if (!at(assertion.typeIndex, '"type":"webauthn.get"'))
    problems.push(`clientDataJSON does not hold "type":"webauthn.get" at typeIndex ${assertion.typeIndex}`);
  if (!at(assertion.challengeIndex, `"challenge":"${encodedChallenge}"`))
    problems.push(
      `clientDataJSON does not hold the digest as its challenge at challengeIndex ${assertion.challengeIndex}`,
    );
  let origin: string | null = null;
  try {
    const parsed = JSON.parse(clientData) as Record<string, unknown>;
    origin = typeof parsed.origin === "string" ? parsed.origin : null;
    if (parsed.type !== "webauthn.get") problems.push(`its type is ${JSON.stringify(parsed.type)}, not "webauthn.get"`);
    if (parsed.challenge !== encodedChallenge)
      problems.push(`its challenge ${JSON.stringify(parsed.challenge)} is not the digest (${encodedChallenge})`);
  } catch {
    problems.push("clientDataJSON is not JSON");
  }

  const s = BigInt(assertion.s);
  if (s > P256_N / 2n) problems.push("its signature's s is above n / 2 (the high-s twin)");
  if (!p256Verifies(key, Buffer.concat([authenticatorData, sha256(clientData)]), assertion.r, assertion.s))
    problems.push("the P-256 signature over authenticatorData ‖ sha256(clientDataJSON) is not the key's");
  return { origin, rpIdHash, problems };
}

/** ES256: (r, s) is `key`'s signature of sha256(message); false for a key that is not a P-256 point. */
function p256Verifies(key: string, message: Uint8Array, r: string, s: string): boolean {
  if (dataLength(key) !== 64) return false;
  const bytes = Buffer.from(getBytes(key));
  try {
    const publicKey = createPublicKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: bytes.subarray(0, 32).toString("base64url"),
        y: bytes.subarray(32).toString("base64url"),
      },
      format: "jwk",
    });
    const signature = Buffer.concat([getBytes(r), getBytes(s)]);
    return verify("sha256", message, { key: publicKey, dsaEncoding: "ieee-p1363" }, signature);
  } catch {
    return false;
  }
}

/** The keys and assertions of an account signature, or null when it is not `abi.encode(bytes[], Assertion[])`. */
export function decodePasskeySignature(signature: string): { keys: string[]; assertions: PasskeyAssertion[] } | null {
  try {
    const [keys, assertions] = AbiCoder.defaultAbiCoder().decode(["bytes[]", `${ASSERTION_TUPLE}[]`], signature);
    return { keys: [...keys].map(String), assertions: [...assertions].map((a) => a.toObject() as PasskeyAssertion) };
  } catch {
    return null;
  }
}

/** What the auditor knows of one passkey account: its code, its events, and what it answers now. */
export class PasskeyAccount {
  declare readonly address: string;
  declare readonly reviewedCode: boolean;
  declare readonly events: ChainEvent[];
  declare readonly reviewersNow: string[];
  declare readonly thresholdNow: number;
  /** Its key proofs, as the department wallet checks find them. */
  readonly keyProofs: KeyProofAudit[] = [];

  constructor(
    address: string,
    facts: { reviewedCode: boolean; events: ChainEvent[]; reviewersNow: string[]; thresholdNow: number },
  ) {
    Object.assign(this, { address, ...facts });
  }

  /** The reviewers and threshold just before `position` (every event applied before it), from the events. */
  stateBefore(position?: ChainPosition): { reviewers: Set<string>; threshold: number } {
    const reviewers = new Set<string>();
    let threshold = 0;
    for (const e of this.events) {
      if (position && !isBefore(e, position)) break;
      if (e.name === "ReviewerAdded") reviewers.add(String(e.args.reviewerId).toLowerCase());
      else if (e.name === "ReviewerRemoved") reviewers.delete(String(e.args.reviewerId).toLowerCase());
      else if (e.name === "ThresholdSet") threshold = Number(e.args.threshold);
    }
    return { reviewers, threshold };
  }

  history(): ReviewerChangeAudit[] {
    return this.events.flatMap(({ name, args, transactionHash, blockNumber }): ReviewerChangeAudit[] => {
      if (name === "ReviewerAdded" || name === "ReviewerRemoved") {
        const [reviewerId, key] = [args.reviewerId, args.key].map((word) => String(word).toLowerCase());
        return [
          { kind: name === "ReviewerAdded" ? "ADDED" : "REMOVED", reviewerId, key, transactionHash, blockNumber },
        ];
      }
      if (name === "ThresholdSet")
        return [{ kind: "THRESHOLD", threshold: Number(args.threshold), transactionHash, blockNumber }];
      return [];
    });
  }

  /** The account's events against its answers now: the replayed reviewers and threshold must be what it says. */
  findings(name: string): string[] {
    const findings: string[] = [];
    if (!this.reviewedCode)
      findings.push(
        `${name}'s wallet ${this.address} answers as a DepartmentPasskeyAccount but its code is not the reviewed account's: its reviewers, threshold and signatures prove nothing`,
      );
    const replayed = this.stateBefore();
    const now = new Set(this.reviewersNow.map((key) => keccak256(key).toLowerCase()));
    if (now.size !== replayed.reviewers.size || [...now].some((id) => !replayed.reviewers.has(id)))
      findings.push(
        `${name}'s passkey account ${this.address} answers reviewers() [${[...now].join(", ")}], but its ReviewerAdded / ReviewerRemoved events end at [${[...replayed.reviewers].join(", ")}]`,
      );
    if (replayed.threshold !== this.thresholdNow)
      findings.push(
        `${name}'s passkey account ${this.address} answers threshold() ${this.thresholdNow}, but its ThresholdSet events end at ${replayed.threshold}`,
      );
    return findings;
  }

  /**
   * The account's signature of `digest`, verified here: every assertion by its key over the digest, every key a
   * reviewer just before `position`, and at least the threshold of the time distinct reviewers. `onChain` is the
   * account's own EIP-1271 answer: disagreeing with it is a finding as well.
   */
  checkSignature(
    digest: string,
    signature: string,
    position: ChainPosition,
    { what, onChain, expected }: { what: string; onChain: boolean; expected?: ExpectedOrigin },
  ): { passkeys: PasskeyAssertionAudit[]; findings: string[] } {
    const findings: string[] = [];
    const decoded = decodePasskeySignature(signature);
    const { reviewers, threshold } = this.stateBefore(position);
    if (!decoded) {
      findings.push(`${what}: its signature is not a passkey account signature (abi.encode(bytes[], Assertion[]))`);
      return { passkeys: [], findings: [...findings, ...disagreement(what, this.address, onChain, false)] };
    }
    if (decoded.keys.length !== decoded.assertions.length)
      findings.push(
        `${what}: its signature has ${decoded.keys.length} keys but ${decoded.assertions.length} assertions`,
      );
    const passkeys: PasskeyAssertionAudit[] = [];
    const signedBy = new Set<string>();
    let previous = -1n;
    let ascending = true;
    decoded.assertions.forEach((assertion, i) => {
      const key = decoded.keys[i];
      if (key === undefined) return;
      const reviewerId = keccak256(key).toLowerCase();
      if (BigInt(reviewerId) <= previous) ascending = false;
      previous = BigInt(reviewerId);
      const check = checkAssertion(key, digest, assertion);
      const problems = [...check.problems];
      if (!reviewers.has(reviewerId)) problems.push("its key was not a reviewer of the account then");
      const named = `reviewer ${reviewerId}`;
      for (const problem of problems) findings.push(`${what}: the assertion of ${named}: ${problem}`);
      if (expected && check.origin !== expected.origin)
        findings.push(
          `${what}: the assertion of ${named} was made for origin ${check.origin ?? "(none)"}, not ${expected.origin}`,
        );
      if (expected && check.rpIdHash.toLowerCase() !== expected.rpIdHash.toLowerCase())
        findings.push(
          `${what}: the assertion of ${named} carries RP ID hash ${check.rpIdHash}, not ${expected.rpIdHash} (sha256 of ${new URL(expected.origin).hostname})`,
        );
      const verified = problems.length === 0;
      if (verified) signedBy.add(reviewerId);
      passkeys.push({ reviewerId, origin: check.origin, rpIdHash: check.rpIdHash, verified });
    });
    if (!ascending)
      findings.push(`${what}: its keys are not in strictly ascending reviewerId order (a reviewer counted twice?)`);
    if (signedBy.size < threshold)
      findings.push(
        `${what}: ${signedBy.size} reviewer(s) verifiably signed, but the account's threshold then was ${threshold}`,
      );
    const valid =
      decoded.keys.length === decoded.assertions.length &&
      ascending &&
      signedBy.size === decoded.keys.length &&
      signedBy.size >= threshold;
    findings.push(...disagreement(what, this.address, onChain, valid));
    return { passkeys, findings };
  }
}

function disagreement(what: string, account: string, onChain: boolean, offChain: boolean): string[] {
  if (onChain === offChain) return [];
  return [
    `${what}: the passkey account ${account} answers that the signature is ${onChain ? "valid" : "not valid"}, but the auditor's own check finds it ${offChain ? "valid" : "not valid"}`,
  ];
}

/** Recognises the department wallets that are passkey accounts, each looked at once, at the audited block. */
export class PasskeyAccounts {
  readonly #accounts = new Map<string, Promise<PasskeyAccount | null>>();
  readonly notes: string[] = [];

  readonly #provider: JsonRpcProvider;
  readonly #reader: Pick<LogReader, "contractEvents">;
  readonly #asOfBlock: number;
  readonly expected?: ExpectedOrigin;

  constructor(
    provider: JsonRpcProvider,
    reader: Pick<LogReader, "contractEvents">,
    asOfBlock: number,
    expected?: ExpectedOrigin,
  ) {
    [this.#provider, this.#reader, this.#asOfBlock, this.expected] = [provider, reader, asOfBlock, expected];
  }

  /** The passkey account at `address`, or null when what is there does not answer as one. */
  account(address: string): Promise<PasskeyAccount | null> {
    const wallet = getAddress(address);
    if (!this.#accounts.has(wallet)) this.#accounts.set(wallet, this.#recognise(wallet));
    return this.#accounts.get(wallet)!;
  }

  async #recognise(address: string): Promise<PasskeyAccount | null> {
    const code = await this.#provider.getCode(address, this.#asOfBlock);
    if (code === "0x") return null;
    const account = new Contract(address, passkeyAccountAbi, this.#provider);
    const ask = (name: string) => account.getFunction(name).staticCallResult({ blockTag: this.#asOfBlock });
    let answers;
    try {
      answers = await Promise.all([ask("threshold"), ask("reviewers"), ask("eip712Domain")]);
    } catch {
      return null;
    }
    const [[threshold], [keys], domain] = answers;
    if (domain.name !== "DepartmentPasskeyAccount") return null;
    let fromBlock = 0;
    try {
      fromBlock = await creationBlock(this.#provider, address, this.#asOfBlock);
    } catch {
      this.notes.push(
        `the node keeps no state for some past blocks: the passkey account ${address}'s events were read from block 0`,
      );
    }
    const events = await this.#reader.contractEvents(address, passkeyAccountAbi, fromBlock);
    const reviewersNow = [...keys].map((k: string) => String(k).toLowerCase());
    const reviewedCode = keccak256(code) === REVIEWED_PASSKEY_ACCOUNT_CODE_HASH;
    return new PasskeyAccount(address, { reviewedCode, events, reviewersNow, thresholdNow: Number(threshold) });
  }
}
