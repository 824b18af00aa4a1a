import { expect } from "chai";
import { decodeBytes32String, encodeBytes32String } from "ethers";
import { bytes16ToUuid, bytes32ToString, stageNumber, stringToBytes32, uuidToBytes16 } from "../../abis/codec.ts";

describe("abis codec (abis/codec.ts)", function () {
  it("round-trips a UUID through the bytes16 the contracts store, lower case", function () {
    const uuid = "0B6E2D9E-5D9A-4F3E-8D6B-1C2E3F4A5B6C";
    expect(uuidToBytes16(uuid)).to.equal("0x0b6e2d9e5d9a4f3e8d6b1c2e3f4a5b6c");
    expect(bytes16ToUuid(uuidToBytes16(uuid))).to.equal(uuid.toLowerCase());
    const leadingZeros = "00a1b2c3-d4e5-4f60-8a7b-0c9d8e7f6a5b";
    expect(uuidToBytes16(leadingZeros)).to.equal("0x00a1b2c3d4e54f608a7b0c9d8e7f6a5b");
    expect(bytes16ToUuid(uuidToBytes16(leadingZeros))).to.equal(leadingZeros);
  });

  it("left-pads a short bytes16 (as a chain value without leading zeros) and refuses what is not one", function () {
    for (const short of ["0x1", "0x01"]) expect(bytes16ToUuid(short)).to.equal("00000000-0000-0000-0000-000000000001");
    for (const bad of [`0x${"0".repeat(33)}`, "0xzz"]) expect(() => bytes16ToUuid(bad)).to.throw(/not a bytes16/);
    for (const bad of ["0b6e2d9e5d9a4f3e8d6b1c2e3f4a5b6c", "not-a-uuid"])
      expect(() => uuidToBytes16(bad)).to.throw(/not a UUID/);
  });

  it("encodes short texts exactly as ethers' encodeBytes32String, and decodes them back", function () {
    for (const text of ["", "BUILDING_PERMIT", "é-ü", "é-ünïcode", "x".repeat(31)]) {
      expect(stringToBytes32(text), text).to.equal(encodeBytes32String(text));
      expect(bytes32ToString(encodeBytes32String(text)), text).to.equal(decodeBytes32String(encodeBytes32String(text)));
    }
    expect(() => stringToBytes32("x".repeat(32))).to.throw(/longer than 31 bytes/);
    expect(() => bytes32ToString("0x00")).to.throw(/not a bytes32/);
  });

  it("numbers a stage from 1 (its stageOrder) where the contracts index it from 0, bigint or number", function () {
    expect([0, 1, 15].map(stageNumber)).to.deep.equal([1, 2, 16]);
    expect(stageNumber(2n)).to.equal(3);
  });
});
