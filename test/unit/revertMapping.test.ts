import { expect } from "chai";
import { Interface } from "ethers";
import { DocumentRegistryAbi } from "../../abis/index.ts";
import { decodeRevert } from "../../api/src/chain/chainErrors.ts";
import { apiErrorOf } from "../../api/src/domain/revertMapping.ts";

describe("revertMapping: the API answer to a contract error", function () {
  const documents = new Interface(DocumentRegistryAbi.filter((item) => item.type === "error") as never);
  const revert = (name: string, args: unknown[]) => decodeRevert(documents.encodeErrorResult(name, args))!;
  const hash = `0x${"ab".repeat(32)}`;

  it("answers identical bytes with 409 DUPLICATE_DOCUMENT without the token that holds them (it may be another applicant's)", function () {
    const answer = apiErrorOf(revert("DocumentAlreadyAnchored", [hash, 4242n]));
    expect(answer).to.include({ status: 409, code: "DUPLICATE_DOCUMENT" });
    expect(answer.details).to.deep.equal({ error: "DocumentAlreadyAnchored" });
    expect(JSON.stringify(answer)).not.to.include("4242");
  });

  it("keeps the arguments of errors that name only what the caller sent", function () {
    const answer = apiErrorOf(revert("DocumentNotLatestVersion", [hash, 1, 2]));
    expect(answer).to.include({ status: 409, code: "CONCURRENT_UPDATE" });
    expect(answer.details).to.deep.equal({ error: "DocumentNotLatestVersion", args: [hash, "1", "2"] });
  });
});
