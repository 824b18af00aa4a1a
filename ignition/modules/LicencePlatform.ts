import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { ROLES } from "../../abis/index.ts";
import { reviewedArtifact } from "../reviewedArtifacts.ts";

// Role ids generated from contracts/libraries/Roles.sol (abis/roles.ts).
const { ADMIN_ROLE, OPERATOR_ROLE, KEEPER_ROLE } = ROLES;

/**
 * The contracts of the reviewed build (ignition/reviewedArtifacts.ts: no compiler needed), wired as production
 * needs them:
 * - the approval registry is wired into the licence token (`setApprovalRegistry`) and the document registry
 *   (`setReviewRegistry`) once, here: no role can later make another address drive reviews;
 * - the decision verifier and the registry extension (both stateless) are immutables of the approval registry;
 * - three different keys: `governance` holds DEFAULT_ADMIN_ROLE (grants roles; registers departments, their
 *   wallet changes and workflow versions: who decides; a multisig on a real network), `admin` holds ADMIN_ROLE
 *   (suspensions, escalations, department activation), `operator` (the API's hot wallet) holds OPERATOR_ROLE,
 *   and `keeper` KEEPER_ROLE. The deployer holds DEFAULT_ADMIN_ROLE while wiring and granting; scripts/deploy.ts then hands it
 *   to governance when governance is another address (a multisig), and renounces its own.
 */
export default buildModule("LicencePlatform", (m) => {
  const deployer = m.getAccount(0);
  const operator = m.getParameter("operator");
  const admin = m.getParameter("admin");
  const keeper = m.getParameter("keeper");
  const walletDelay = m.getParameter("walletDelay", 24 * 60 * 60);
  const baseURI = m.getParameter("baseURI", "http://127.0.0.1:3000/api/v1/verify/");

  const token = m.contract("LicenceToken", reviewedArtifact("LicenceToken"), [
    "Licence Approval Token",
    "LICENCE",
    baseURI,
    deployer,
  ]);
  const documents = m.contract("DocumentRegistry", reviewedArtifact("DocumentRegistry"), [token, deployer]);
  const verifier = m.contract("DecisionVerifier", reviewedArtifact("DecisionVerifier"), []);
  const extension = m.contract("RegistryExtension", reviewedArtifact("RegistryExtension"), []);
  const registry = m.contract("ApprovalRegistry", reviewedArtifact("ApprovalRegistry"), [
    token,
    documents,
    verifier,
    extension,
    deployer,
    walletDelay,
  ]);

  m.call(token, "setApprovalRegistry", [registry]);
  m.call(documents, "setReviewRegistry", [registry]);

  m.call(token, "grantRole", [OPERATOR_ROLE, operator], { id: "token_operatorRole" });
  m.call(documents, "grantRole", [OPERATOR_ROLE, operator], { id: "documents_operatorRole" });
  m.call(registry, "grantRole", [OPERATOR_ROLE, operator], { id: "registry_operatorRole" });
  m.call(token, "grantRole", [ADMIN_ROLE, admin], { id: "token_adminRole" });
  m.call(registry, "grantRole", [ADMIN_ROLE, admin], { id: "registry_adminRole" });
  m.call(registry, "grantRole", [KEEPER_ROLE, keeper], { id: "registry_keeperRole" });

  return { token, documents, verifier, extension, registry };
});
