/**
 * The wiring check and the deployment file on synthetic inputs: the registry wired exactly once into the token and
 * the document registry, the registry pointing back at the deployment's contracts and verifier (with code), the
 * deployment's wallet delay, at least 24 h outside the development chain; a deployment file without the role keys
 * or the delay is refused.
 */
import { expect } from "chai";
import { parseDeployment } from "../../scripts/audit/deploymentFile.ts";
import { wiringFindings, type WiringAudit } from "../../scripts/audit/wiringAudit.ts";
import { CONTRACTS, address, deployment } from "./syntheticChain.ts";

const once = (registry: string) => [{ registry, transactionHash: "0x01", blockNumber: 3 }];
const sound = (): WiringAudit => ({
  tokenApprovalRegistry: CONTRACTS.ApprovalRegistry,
  documentReviewRegistry: CONTRACTS.ApprovalRegistry,
  documentLicenceToken: CONTRACTS.LicenceToken,
  registryLicenceToken: CONTRACTS.LicenceToken,
  registryDocumentRegistry: CONTRACTS.DocumentRegistry,
  decisionVerifier: CONTRACTS.DecisionVerifier,
  decisionVerifierHasCode: true,
  walletDelay: 60,
  approvalRegistrySet: once(CONTRACTS.ApprovalRegistry),
  reviewRegistrySet: once(CONTRACTS.ApprovalRegistry),
});

describe("auditor: the contracts' wiring and the deployment file (synthetic inputs)", function () {
  it("accepts the deployment's wiring, set once", function () {
    expect(wiringFindings(sound(), deployment())).to.deep.equal([]);
  });

  it("flags another registry, a second wiring event, a verifier without code and another wallet delay", function () {
    const other = address();
    const wiring = {
      ...sound(),
      tokenApprovalRegistry: other,
      decisionVerifierHasCode: false,
      walletDelay: 1,
      reviewRegistrySet: [
        ...once(CONTRACTS.ApprovalRegistry),
        { registry: other, transactionHash: "0x02", blockNumber: 9 },
      ],
    };
    expect(wiringFindings(wiring, deployment())).to.deep.equal([
      `LicenceToken.approvalRegistry() is ${other}, not the deployment's ApprovalRegistry ${CONTRACTS.ApprovalRegistry}`,
      `the decision verifier ${CONTRACTS.DecisionVerifier} has no code: no signed decision could be checked`,
      "ApprovalRegistry.walletDelay() is 1 s but the deployment file says 60 s",
      "ReviewRegistrySet (DocumentRegistry) was emitted 2 times: the approval registry is wired exactly once",
      `ReviewRegistrySet (DocumentRegistry) wired ${other} at block 9 (tx 0x02), not the deployment's ApprovalRegistry ${CONTRACTS.ApprovalRegistry}`,
    ]);
  });

  it("flags a wallet delay under 24 h on any chain but the development chain 31337", function () {
    const onBesu = deployment({ chainId: 1337, walletDelay: 86_399 });
    expect(wiringFindings({ ...sound(), walletDelay: 86_399 }, onBesu)).to.deep.equal([
      "ApprovalRegistry.walletDelay() is 86399 s, under 86400 s (24 h) on chain 1337: a department would have less than a day to see and cancel a change of its wallet (only the development chain 31337 may be shorter)",
    ]);
    expect(wiringFindings({ ...sound(), walletDelay: 86_400 }, { ...onBesu, walletDelay: 86_400 })).to.deep.equal([]);
    // The embedded stack and the tests wait seconds, on the development chain only.
    expect(wiringFindings({ ...sound(), walletDelay: 4 }, deployment({ walletDelay: 4 }))).to.deep.equal([]);
  });

  it("refuses a deployment file without the role keys, the verifier or the wallet delay", function () {
    const { roles, walletDelay, ...old } = deployment();
    void roles;
    void walletDelay;
    const contracts = { ...old.contracts } as Record<string, string>;
    delete contracts.DecisionVerifier;
    expect(() => parseDeployment({ ...old, contracts }, "old.json")).to.throw(
      "old.json is not a deployment file: contracts.DecisionVerifier is not an address; roles.governance is not an address; roles.admin is not an address; roles.operator is not an address; roles.keeper is not an address; walletDelay is not a whole number of seconds ≥ 1",
    );
    const parsed = parseDeployment(JSON.parse(JSON.stringify(deployment({ deployer: undefined }))));
    expect(parsed).to.not.have.property("deployer");
    expect(parsed).to.not.have.property("otherContracts");
  });

  it("keeps any other contract the file names, for the code audit, and refuses one that is not an address", function () {
    const extra = address();
    const file = { ...deployment(), contracts: { ...CONTRACTS, WorkflowCompiler: extra.toLowerCase() } };
    expect(parseDeployment(file).otherContracts).to.deep.equal({ WorkflowCompiler: extra });
    expect(parseDeployment(file).contracts).to.deep.equal(CONTRACTS);
    expect(() => parseDeployment({ ...file, contracts: { ...CONTRACTS, WorkflowCompiler: "0x12" } })).to.throw(
      "contracts.WorkflowCompiler is not an address",
    );
  });
});
