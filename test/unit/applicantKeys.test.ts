import { expect } from "chai";
import { createHmac } from "node:crypto";
import { computeAddress, SigningKey } from "ethers";
import { applicantAddress, applicantAddresses, licenceAddress } from "../../api/src/chain/applicantKeys.ts";

const SECRET = `0x${"5a".repeat(32)}`;
const REQUEST = "7f3c2a9e-4b1d-4c8e-9a6f-0d2e5b8c1a34";
const OTHER_REQUEST = "0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b";
const addressOfKey = (message: string) =>
  computeAddress(
    new SigningKey(
      `0x${createHmac("sha256", Buffer.from(SECRET.slice(2), "hex"))
        .update(message)
        .digest("hex")}`,
    ).publicKey,
  );

describe("custodial licence addresses (api/src/chain/applicantKeys.ts)", function () {
  it("derives each licence's address from the key HMAC-SHA256(custody secret, its request id and applicant id)", function () {
    expect(licenceAddress(SECRET, "alice", REQUEST)).to.equal(
      addressOfKey(`licence-approval/licence/v2:${REQUEST}:alice`),
    );
    expect(licenceAddress(SECRET, "alice", REQUEST)).to.equal(licenceAddress(SECRET, "alice", REQUEST));
    expect(licenceAddress(`0x${"5b".repeat(32)}`, "alice", REQUEST)).to.not.equal(
      licenceAddress(SECRET, "alice", REQUEST),
    );
  });

  it("gives two licences of one applicant different addresses, neither the applicant's address of before", function () {
    const first = licenceAddress(SECRET, "alice", REQUEST);
    const second = licenceAddress(SECRET, "alice", OTHER_REQUEST);
    expect(first).to.not.equal(second);
    expect(licenceAddress(SECRET, "bob", REQUEST)).to.not.equal(first);
    expect([first, second]).to.not.include(applicantAddress(SECRET, "alice"));
    expect(applicantAddress(SECRET, "alice")).to.equal(addressOfKey("licence-approval/applicant/v1:alice"));
  });

  it("gives use cases the licence address without the custody secret", function () {
    const addressOf = applicantAddresses(SECRET);
    expect(addressOf("alice", REQUEST)).to.equal(licenceAddress(SECRET, "alice", REQUEST));
  });
});
