import { expect } from "chai";
import { Interface } from "ethers";
import { ApprovalRegistryAbi, DocumentRegistryAbi, LicenceTokenAbi } from "../../abis/index.ts";
import { decodeRevert } from "../../api/src/chain/chainErrors.ts";
import { AppError } from "../../api/src/domain/errors.ts";
import { apiErrorOf, isRevert, REVERT_ANSWERS } from "../../api/src/domain/revertMapping.ts";

/** The API's one table of contract errors (api/src/domain/revertMapping.ts), checked against the generated ABIs. */
const abiErrors = [...LicenceTokenAbi, ...DocumentRegistryAbi, ...ApprovalRegistryAbi].filter(
  (item) => item.type === "error",
);
const errors = new Interface(abiErrors as never);
const revert = (name: string, args: unknown[]) => decodeRevert(errors.encodeErrorResult(name, args))!;
const hash = `0x${"ab".repeat(32)}`;

describe("revertMapping: the API answer to a contract error", function () {
  it("names only errors the contracts' ABIs declare", function () {
    const declared = new Set<string>(abiErrors.map((e) => e.name));
    const unknown = Object.keys(REVERT_ANSWERS).filter((name) => !declared.has(name));
    expect(unknown, "table keys that are not errors of the ABIs").to.deep.equal([]);
  });

  it("answers only with client-error statuses and spec-shaped codes", function () {
    for (const [name, answer] of Object.entries(REVERT_ANSWERS)) {
      expect(answer.status, name).to.be.within(400, 499);
      expect(answer.code, name).to.match(/^[A-Z][A-Z_]+$/);
      expect(answer.message, name).to.not.equal("");
    }
  });

  it("maps a decoded revert to the table's answer, keeping the revert's name and arguments as details", function () {
    const error = apiErrorOf(revert("DocumentsNotEditable", [7n]));
    expect(error).to.be.instanceOf(AppError);
    expect({ status: error.status, code: error.code, message: error.message }).to.deep.equal(
      REVERT_ANSWERS.DocumentsNotEditable,
    );
    expect(error.details).to.deep.equal({ error: "DocumentsNotEditable", args: ["7"] });
    const answer = apiErrorOf(revert("DocumentNotLatestVersion", [hash, 1, 2]));
    expect(answer).to.include({ status: 409, code: "CONCURRENT_UPDATE" });
    expect(answer.details).to.deep.equal({ error: "DocumentNotLatestVersion", args: [hash, "1", "2"] });
  });

  it("answers identical bytes with 409 DUPLICATE_DOCUMENT without the token that holds them (it may be another applicant's)", function () {
    const answer = apiErrorOf(revert("DocumentAlreadyAnchored", [hash, 4242n]));
    expect(answer).to.include({ status: 409, code: "DUPLICATE_DOCUMENT" });
    expect(answer.details).to.deep.equal({ error: "DocumentAlreadyAnchored" });
    expect(JSON.stringify(answer)).not.to.include("4242");
  });

  it("lets a use case override an error's meaning", function () {
    const override = new AppError(409, "NOT_ESCALATED", "no escalation");
    expect(apiErrorOf(revert("ReviewWrongPhase", [1n, 2]), { ReviewWrongPhase: () => override })).to.equal(override);
    expect(apiErrorOf(revert("ReviewWrongPhase", [1n, 2])).code).to.equal("INVALID_STATE");
  });

  it("leaves an error the table does not name as the generic 409 CHAIN_REJECTED", function () {
    const error = apiErrorOf(revert("WorkflowUnknown", [3]));
    expect([error.status, error.code]).to.deep.equal([409, "CHAIN_REJECTED"]);
    expect(error.details).to.deep.equal({ error: "WorkflowUnknown", args: ["3"] });
  });

  it("isRevert tells a revert by name", function () {
    expect(isRevert(revert("TimeoutNotSet", [1n, 0]), "TimeoutNotSet", "TimeoutAlreadyHandled")).to.equal(true);
    expect(isRevert(revert("TimeoutNotSet", [1n, 0]), "TimeoutAlreadyHandled")).to.equal(false);
    expect(isRevert(new Error("TimeoutNotSet"), "TimeoutNotSet")).to.equal(false);
  });
});
