import { expect } from "chai";
import { deflateSync } from "node:zlib";
import { StatusList } from "@sd-jwt/jwt-status-list";
import {
  STATUS_LIST_SIZE,
  TOKEN_STATUS,
  buildStatusLists,
  statusListDigest,
  statusPosition,
} from "../../api/src/domain/credentials/statusLists.ts";

/** Where a licence sits in the status lists, and what the decoded lists hold. */
describe("status lists", () => {
  it("places a token by its id alone, 131,072 entries per list", () => {
    expect(statusPosition(5n)).to.deep.equal({ list: 0, index: 5 });
    expect(statusPosition(BigInt(STATUS_LIST_SIZE) + 3n)).to.deep.equal({ list: 1, index: 3 });
  });

  it("sets the W3C bits left-most first and leaves other lists' tokens out", () => {
    const bits = buildStatusLists(0, [
      { tokenId: 0n, status: "REVOKED" },
      { tokenId: 9n, status: "SUSPENDED" },
      { tokenId: 10n, status: "APPROVED" },
      { tokenId: BigInt(STATUS_LIST_SIZE) + 1n, status: "REVOKED" },
    ]);
    expect(bits.revocation.length).to.equal(16_384);
    expect(bits.revocation[0]).to.equal(0x80);
    expect(bits.suspension[1]).to.equal(0x40);
    expect(bits.revocation.slice(1).every((byte) => byte === 0)).to.equal(true);
    expect(bits.suspension.reduce((sum, byte) => sum + byte, 0)).to.equal(0x40);
  });

  it("packs the token status list as the IETF library reads it", () => {
    const bits = buildStatusLists(0, [
      { tokenId: 1n, status: "REVOKED" },
      { tokenId: 6n, status: "SUSPENDED" },
    ]);
    const list = StatusList.decompressStatusList(deflateSync(bits.tokenStatus).toString("base64url"), 2);
    const expected = new StatusList(new Array(STATUS_LIST_SIZE).fill(0), 2);
    expected.setStatus(1, TOKEN_STATUS.INVALID);
    expected.setStatus(6, TOKEN_STATUS.SUSPENDED);
    expect(list.statusList).to.deep.equal(expected.statusList);
    expect(list.getStatus(1)).to.equal(TOKEN_STATUS.INVALID);
    expect(list.getStatus(6)).to.equal(TOKEN_STATUS.SUSPENDED);
    expect(list.getStatus(0)).to.equal(TOKEN_STATUS.VALID);
  });

  it("digests the decoded bytes, so a changed bit changes the anchor", () => {
    const before = buildStatusLists(0, [{ tokenId: 4n, status: "APPROVED" }]);
    const after = buildStatusLists(0, [{ tokenId: 4n, status: "SUSPENDED" }]);
    expect(statusListDigest(before.suspension)).to.match(/^0x[0-9a-f]{64}$/);
    expect(statusListDigest(before.suspension)).not.to.equal(statusListDigest(after.suspension));
    expect(statusListDigest(before.revocation)).to.equal(statusListDigest(after.revocation));
  });
});
