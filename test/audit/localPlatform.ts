/**
 * The platform as an operator deploys it, on a fresh local chain: anvil (London, the chain id asked for, its data
 * in a temporary directory) and `scripts/deploy.ts` run by Hardhat against it, so the contracts, their wiring and
 * their roles are exactly what ignition/modules/LicencePlatform.ts deploys: the reviewed build, abis/build.json.
 * Also the reviewed build of the compiled artifacts, written to the same directory, for `--build`: equal to
 * abis/build.json once `npm run abis` has run after a contract change (test/contracts/ReviewedBuild.test.ts checks
 * it has), and a code finding in every audit here until then.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import {
  Contract,
  JsonRpcProvider,
  Wallet,
  ZeroAddress,
  concat,
  encodeBytes32String as b32,
  id,
  toBeHex,
  zeroPadValue,
  type BaseWallet,
  type ContractRunner,
  type HDNodeWallet,
  type InterfaceAbi,
  type TypedDataDomain,
} from "ethers";
import {
  ApprovalRegistryAbi,
  DEPARTMENT_KEY_TYPES,
  DecisionVerifierAbi,
  DocumentRegistryAbi,
  LicenceTokenAbi,
} from "../../abis/index.ts";
import LicencePlatform from "../../ignition/modules/LicencePlatform.ts";
import {
  deployedContractNames,
  reviewedBuildFromArtifacts,
  reviewedBuildJson,
  type ReviewedBuild,
} from "../../scripts/audit/reviewedBuild.ts";
import type { Deployment } from "../../scripts/audit/deploymentFile.ts";
import { startLocalChain, type LocalChain } from "../../scripts/stack/localChain.ts";
import { freePort } from "../../scripts/stack/ports.ts";
import { REPO_ROOT, auditText, runAudit } from "./auditCli.ts";

const execute = promisify(execFile);
const HARDHAT = path.join(REPO_ROOT, "node_modules", "hardhat", "dist", "src", "cli.js");

export interface LocalPlatform {
  chain: LocalChain;
  dir: string;
  provider: JsonRpcProvider;
  deploymentFile: string;
  deployment: Deployment & Record<string, unknown>;
  build: ReviewedBuild;
  buildFile: string;
  /** The auditor's tool on this deployment (`--json`, the reviewed build of the artifacts), with more arguments. */
  audit(...args: string[]): ReturnType<typeof runAudit>;
  /** The same as text (no --json). */
  auditText(...args: string[]): Promise<string>;
  /** The same, with another deployment file (written under the platform's directory). */
  auditWith(deployment: object, ...args: string[]): ReturnType<typeof runAudit>;
  close(): Promise<void>;
}

/** A fresh anvil with chain id `chainId` on a free port, its state under a temporary directory. */
export async function localChain(chainId: number): Promise<{ chain: LocalChain; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "audit-platform-"));
  const chain = await startLocalChain({ dataDir: dir, port: await freePort(), chainId, snapshotIntervalMs: 3_600_000 });
  return { chain, dir };
}

/** `scripts/deploy.ts` against `rpcUrl` (the node's first account deploys); env adds the role keys. */
export function deploy(rpcUrl: string, dir: string, env: Record<string, string>, cwd = REPO_ROOT) {
  return execute(process.execPath, [HARDHAT, "run", "--no-compile", "scripts/deploy.ts", "--network", "localhost"], {
    cwd,
    env: {
      ...process.env,
      CHAIN_RPC_URL: rpcUrl,
      DEPLOYMENT_FILE: path.join(dir, "deployment.json"),
      IGNITION_DIR: path.join(dir, "ignition"),
      DEPLOYMENT_ID: "audit-test",
      ...env,
    },
    maxBuffer: 16 << 20,
  });
}

/**
 * A chain with the platform deployed on it; `env` as for deploy.ts (OPERATOR_ADDRESS and ADMIN_ADDRESS required),
 * and what `prepare` adds to it after readying the chain (e.g. a Safe deployed first, as GOVERNANCE_ADDRESS).
 */
export async function localPlatform(
  chainId: number,
  env: Record<string, string>,
  prepare: (provider: JsonRpcProvider) => Promise<Record<string, string>> = async () => ({}),
): Promise<LocalPlatform> {
  const { chain, dir } = await localChain(chainId);
  const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
  const close = async () => {
    provider.destroy();
    await chain.kill();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await deploy(chain.rpcUrl, dir, { ...env, ...(await prepare(provider)) });
    const deploymentFile = path.join(dir, "deployment.json");
    const build = await reviewedBuildFromArtifacts(
      path.join(REPO_ROOT, "artifacts"),
      deployedContractNames(LicencePlatform),
    );
    const buildFile = path.join(dir, "build.json");
    await writeFile(buildFile, reviewedBuildJson(build));
    let other = 0;
    return {
      chain,
      dir,
      provider,
      deploymentFile,
      deployment: JSON.parse(await readFile(deploymentFile, "utf8")),
      build,
      buildFile,
      audit: (...args) => runAudit(chain.rpcUrl, deploymentFile, "--build", buildFile, ...args),
      auditText: (...args) => auditText(chain.rpcUrl, deploymentFile, "--build", buildFile, ...args),
      async auditWith(deployment, ...args) {
        const file = path.join(dir, `deployment-${++other}.json`);
        await writeFile(file, JSON.stringify(deployment));
        return runAudit(chain.rpcUrl, file, "--build", buildFile, ...args);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `execTransaction` of the Safe `safe`: a call to `to` with `data`, signed by `signers` (ascending addresses). */
export async function fromSafe(safe: Contract, to: string, data: string, signers: BaseWallet[]) {
  const call = [to, 0, data, 0, 0, 0, 0, ZeroAddress, ZeroAddress] as const;
  const hash: string = await safe.getTransactionHash(...call, await safe.nonce());
  const ordered = [...signers].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
  const signatures = concat(ordered.map((owner) => owner.signingKey.sign(hash).serialized));
  const relayer = await (safe.runner as JsonRpcProvider).getSigner(0);
  return (await (safe.connect(relayer) as Contract).execTransaction(...call, signatures)).wait();
}

type Key = Wallet | HDNodeWallet;

/** A workflow stage of `codes`' departments, as registerWorkflow takes it. */
export const stage = (codes: string[], executionType = 1, completion = 0) => ({
  executionType,
  completion,
  threshold: 0,
  onTimeout: 0,
  onRejection: 0,
  timeoutSeconds: 0,
  mandatoryMask: 0,
  departments: codes.map((code) => b32(code)),
});

/**
 * The deployed contracts on `p` (acting as `runner`), the registry's EIP-712 domain, and the steps the on-chain
 * tests share: a submitted request with one document, and the decision a department has in front of it now.
 */
export async function platformContracts(p: LocalPlatform, runner: ContractRunner, operator: Key) {
  const { contracts } = p.deployment;
  const contract = (name: keyof typeof contracts, abi: unknown) =>
    new Contract(contracts[name], abi as InterfaceAbi, runner);
  const token = contract("LicenceToken", LicenceTokenAbi);
  const documents = contract("DocumentRegistry", DocumentRegistryAbi);
  const registry = contract("ApprovalRegistry", ApprovalRegistryAbi);
  const [, name, version, chainId, verifyingContract, salt] = await registry.eip712Domain();
  const domain: TypedDataDomain = { name, version, chainId, verifyingContract, salt };
  const as = (c: Contract, wallet: Key) => c.connect(wallet.connect(p.provider)) as Contract;
  const mined = async (tx: Promise<{ wait(): Promise<unknown> }>) => (await tx).wait();
  await p.provider.send("anvil_setBalance", [operator.address, FUNDS]);
  return {
    token,
    documents,
    registry,
    verifier: contract("DecisionVerifier", DecisionVerifierAbi),
    domain,
    as,
    mined,
    fund: (address: string) => p.provider.send("anvil_setBalance", [address, FUNDS]),
    /** `wallet`'s proof that it holds its key, as registerDepartment and proposeDepartmentWallet want it. */
    keyProof: (wallet: Key, code: string, custody: number) =>
      wallet.signTypedData(domain, DEPARTMENT_KEY_TYPES, { code: b32(code), wallet: wallet.address, custody }),
    departmentId: async (code: string) => Number((await registry.departmentByCode(b32(code)))[0]),
    /** A submitted request `tokenId` of workflow `type` with one document (its plan). */
    async submitted(tokenId: number, type = "PERMIT", commitment = id(`applicant ${tokenId}`)) {
      await mined(as(token, operator).mint(Wallet.createRandom().address, tokenId, b32(type), commitment));
      const documentId = zeroPadValue(toBeHex(tokenId), 16);
      await mined(as(documents, operator).anchorDocument(tokenId, documentId, b32("SITE_PLAN"), id(`plan ${tokenId}`)));
      await mined(as(registry, operator).submit(tokenId));
    },
    /** The decision `departmentId` has in front of it on `tokenId` now: approve every document at the current round. */
    async decision(tokenId: number, departmentId: number) {
      const progress = await registry.progressOf(tokenId);
      const record = await registry.departmentRecord(departmentId);
      const now = (await p.provider.getBlock("latest"))!.timestamp;
      const [stage, round, nonce] = [progress.stage, progress.stageStartedAt, record.nonce];
      const [documents, remarksHash, deadline] = [[id(`plan ${tokenId}`)], id("fine"), now + 3600];
      return {
        tokenId,
        departmentId,
        stage,
        round,
        decision: 1,
        reasonCode: 0,
        reviewedMask: 0,
        documents,
        remarksHash,
        nonce,
        deadline,
      };
    },
  };
}

const FUNDS = "0x3635c9adc5dea00000";
