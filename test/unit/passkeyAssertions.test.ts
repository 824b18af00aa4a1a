import { expect } from "chai";
import { createHash } from "node:crypto";
import { hexlify, id, keccak256 } from "ethers";
import type { ChainEvent } from "../../scripts/audit/logReader.ts";
import {
  PasskeyAccount,
  checkAssertion,
  decodePasskeySignature,
  expectedOrigin,
} from "../../scripts/audit/passkeyAudit.ts";
import {
  FLAG_BS,
  FLAG_UP,
  FLAG_UV,
  assert,
  byReviewerId,
  createPasskey,
  encodeApprovals,
  signWithPasskeys,
} from "../contracts/helpers/passkeys.ts";

const digest = id("a decision's digest");
const other = id("another decision's digest");
const rpIdHash = hexlify(createHash("sha256").update("licences.example").digest());

describe("passkey assertions verified by the auditor (checkAssertion)", function () {
  const passkey = createPasskey();

  it("accepts a user-verified assertion over the digest, and reads its origin and RP ID hash", function () {
    expect(checkAssertion(passkey.key, digest, assert(passkey, digest))).to.deep.equal({
      origin: "https://licences.example",
      rpIdHash,
      problems: [],
    });
  });

  it("refuses an assertion whose challenge is another digest", function () {
    const { problems } = checkAssertion(passkey.key, digest, assert(passkey, other));
    expect(problems).to.have.length(2);
    expect(problems[0]).to.include("does not hold the digest as its challenge");
    expect(problems[1]).to.include("is not the digest");
  });

  it("refuses a registration (webauthn.create), a user not verified, backed up without eligibility, a high s", function () {
    expect(checkAssertion(passkey.key, digest, assert(passkey, digest, { type: "webauthn.create" })).problems)
      .to.include('its type is "webauthn.create", not "webauthn.get"')
      .and.have.length(2);
    expect(checkAssertion(passkey.key, digest, assert(passkey, digest, { flags: FLAG_UP })).problems).to.deep.equal([
      "the User Verified flag is not set",
    ]);
    expect(
      checkAssertion(passkey.key, digest, assert(passkey, digest, { flags: FLAG_UP | FLAG_UV | FLAG_BS })).problems,
    ).to.deep.equal(["backed up without being backup eligible"]);
    expect(checkAssertion(passkey.key, digest, assert(passkey, digest, { highS: true })).problems).to.deep.equal([
      "its signature's s is above n / 2 (the high-s twin)",
    ]);
  });

  it("refuses another key's signature, a changed clientDataJSON and a key that is not a P-256 point", function () {
    const assertion = assert(passkey, digest);
    const notTheKey = "the P-256 signature over authenticatorData ‖ sha256(clientDataJSON) is not the key's";
    expect(checkAssertion(createPasskey().key, digest, assertion).problems).to.deep.equal([notTheKey]);
    const tampered = { ...assertion, clientDataJSON: assertion.clientDataJSON.replace("licences", "licencez") };
    expect(checkAssertion(passkey.key, digest, tampered).problems).to.deep.equal([notTheKey]);
    expect(checkAssertion(`0x${"11".repeat(64)}`, digest, assertion).problems).to.deep.equal([notTheKey]);
  });

  it("takes the expected origin's host as the RP ID", function () {
    expect(expectedOrigin("https://licences.example/console?x=1")).to.deep.equal({
      origin: "https://licences.example",
      rpIdHash,
    });
  });
});

describe("a passkey account's signature verified by the auditor (PasskeyAccount.checkSignature)", function () {
  const [a, b, c, outsider] = [createPasskey(), createPasskey(), createPasskey(), createPasskey()];
  const event = (name: string, args: Record<string, unknown>, logIndex: number): ChainEvent => ({
    name,
    args: args as never,
    address: "0x0000000000000000000000000000000000000001",
    transactionHash: id(`tx ${logIndex}`),
    blockNumber: 1,
    logIndex,
  });
  // 2 of 3, as the constructor leaves it.
  const account = new PasskeyAccount("0x0000000000000000000000000000000000000001", {
    reviewedCode: true,
    events: [
      ...[a, b, c].map((p, i) => event("ReviewerAdded", { reviewerId: keccak256(p.key), key: p.key }, i)),
      event("ThresholdSet", { previousThreshold: 0, threshold: 2 }, 3),
    ],
    reviewersNow: [a.key, b.key, c.key],
    thresholdNow: 2,
  });
  const decided = { blockNumber: 5, logIndex: 0 };
  const what = "decision APPROVED of PASSKEYS in stage 1 on licence 1";

  it("two reviewers' assertions over the digest: both verified, no finding", function () {
    const checked = account.checkSignature(digest, signWithPasskeys(digest, [a, c]), decided, { what, onChain: true });
    expect(checked.findings).to.deep.equal([]);
    expect(checked.passkeys.map((k) => k.verified)).to.deep.equal([true, true]);
    expect(checked.passkeys.map((k) => k.reviewerId).sort()).to.deep.equal([keccak256(a.key), keccak256(c.key)].sort());
    expect(account.findings("PASSKEYS")).to.deep.equal([]);
  });

  it("an assertion whose challenge is not the digest, though the account answers valid: findings naming the reviewer, the threshold and the disagreement", function () {
    const approvals = byReviewerId([a, b]).map((p) => ({
      key: p.key,
      assertion: assert(p, p === b ? other : digest),
    }));
    const checked = account.checkSignature(digest, encodeApprovals(approvals), decided, { what, onChain: true });
    const reviewer = keccak256(b.key);
    expect(checked.passkeys.find((k) => k.reviewerId === reviewer)!.verified).to.equal(false);
    expect(checked.findings.filter((f) => f.includes(`the assertion of reviewer ${reviewer}`))).to.have.length(2);
    expect(checked.findings).to.include(
      `${what}: 1 reviewer(s) verifiably signed, but the account's threshold then was 2`,
    );
    expect(checked.findings.at(-1)).to.include(
      "answers that the signature is valid, but the auditor's own check finds it not valid",
    );
  });

  it("a key that was not a reviewer then, keys out of order, and a signature that is not an account signature", function () {
    const outside = account.checkSignature(digest, signWithPasskeys(digest, [a, outsider]), decided, {
      what,
      onChain: false,
    });
    expect(outside.findings).to.deep.equal([
      `${what}: the assertion of reviewer ${keccak256(outsider.key)}: its key was not a reviewer of the account then`,
      `${what}: 1 reviewer(s) verifiably signed, but the account's threshold then was 2`,
    ]);
    const unsorted = byReviewerId([a, b])
      .reverse()
      .map((p) => ({ key: p.key, assertion: assert(p, digest) }));
    expect(
      account.checkSignature(digest, encodeApprovals(unsorted), decided, { what, onChain: false }).findings,
    ).to.deep.equal([`${what}: its keys are not in strictly ascending reviewerId order (a reviewer counted twice?)`]);
    expect(decodePasskeySignature("0x1234")).to.equal(null);
    expect(account.checkSignature(digest, "0x1234", decided, { what, onChain: true }).findings).to.have.length(2);
  });

  it("reviewers as of the decision: one added after it does not count", function () {
    const later = new PasskeyAccount(account.address, {
      reviewedCode: true,
      events: [
        ...account.events,
        event("ReviewerAdded", { reviewerId: keccak256(outsider.key), key: outsider.key }, 9),
      ],
      reviewersNow: [a.key, b.key, c.key, outsider.key],
      thresholdNow: 2,
    });
    const signature = signWithPasskeys(digest, [a, outsider]);
    expect(
      later.checkSignature(digest, signature, { blockNumber: 1, logIndex: 5 }, { what, onChain: false }).findings,
    ).to.have.length(2);
    expect(
      later.checkSignature(digest, signature, { blockNumber: 2, logIndex: 0 }, { what, onChain: true }).findings,
    ).to.deep.equal([]);
  });

  it("an assertion for another origin is a finding when an origin is expected", function () {
    const expected = expectedOrigin("https://console.example");
    const checked = account.checkSignature(digest, signWithPasskeys(digest, [a, b]), decided, {
      what,
      onChain: true,
      expected,
    });
    expect(checked.passkeys.every((k) => k.verified)).to.equal(true);
    expect(checked.findings).to.have.length(4);
    expect(checked.findings[0]).to.include("was made for origin https://licences.example, not https://console.example");
    expect(checked.findings[1]).to.include(`carries RP ID hash ${rpIdHash}`);
  });

  it("events that do not end at what the account answers, and code that is not the reviewed account's", function () {
    const lying = new PasskeyAccount(account.address, {
      reviewedCode: false,
      events: account.events,
      reviewersNow: [a.key, b.key],
      thresholdNow: 1,
    });
    const findings = lying.findings("PASSKEYS");
    expect(findings).to.have.length(3);
    expect(findings[0]).to.include("its code is not the reviewed account's");
    expect(findings[1]).to.include("answers reviewers()");
    expect(findings[2]).to.include("answers threshold() 1, but its ThresholdSet events end at 2");
  });
});
