import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { id } from "ethers";

const ADMIN_ROLE = id("ADMIN_ROLE");
const OPERATOR_ROLE = id("OPERATOR_ROLE");
const KEEPER_ROLE = id("KEEPER_ROLE");
const REGISTRY_ROLE = id("REGISTRY_ROLE");

/**
 * The three contracts, wired as production needs them:
 * - the approval registry holds REGISTRY_ROLE on the licence token and the document registry, and is the
 *   document registry's review registry (the only contract told about new versions under review);
 * - `operator` (the API's operator wallet) holds OPERATOR_ROLE on all three; `admin` holds ADMIN_ROLE on the
 *   token and the approval registry; `keeper` holds KEEPER_ROLE on the approval registry.
 * The deployer keeps DEFAULT_ADMIN_ROLE (who grants roles); hand it to governance on a production network.
 */
export default buildModule("LicencePlatform", (m) => {
  const deployer = m.getAccount(0);
  const operator = m.getParameter("operator", deployer);
  const admin = m.getParameter("admin", deployer);
  const keeper = m.getParameter("keeper", deployer);
  const baseURI = m.getParameter("baseURI", "http://127.0.0.1:3000/api/v1/verify/");

  const token = m.contract("LicenceToken", ["Licence Approval Token", "LICENCE", baseURI, deployer]);
  const documents = m.contract("DocumentRegistry", [token, deployer]);
  const registry = m.contract("ApprovalRegistry", [token, documents, deployer]);

  m.call(token, "grantRole", [REGISTRY_ROLE, registry], { id: "token_registryRole" });
  m.call(documents, "grantRole", [REGISTRY_ROLE, registry], { id: "documents_registryRole" });
  m.call(documents, "setReviewRegistry", [registry]);

  m.call(token, "grantRole", [OPERATOR_ROLE, operator], { id: "token_operatorRole" });
  m.call(documents, "grantRole", [OPERATOR_ROLE, operator], { id: "documents_operatorRole" });
  m.call(registry, "grantRole", [OPERATOR_ROLE, operator], { id: "registry_operatorRole" });
  m.call(token, "grantRole", [ADMIN_ROLE, admin], { id: "token_adminRole" });
  m.call(registry, "grantRole", [ADMIN_ROLE, admin], { id: "registry_adminRole" });
  m.call(registry, "grantRole", [KEEPER_ROLE, keeper], { id: "registry_keeperRole" });

  return { token, documents, registry };
});
