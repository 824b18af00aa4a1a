import { createRequire } from "node:module";
import hardhatToolboxMochaEthers from "@nomicfoundation/hardhat-toolbox-mocha-ethers";
import { configVariable, defineConfig } from "hardhat/config";

const require = createRequire(import.meta.url);

// solc binaries cannot be downloaded here: compile with the WASM build shipped in the
// npm `solc` package. Hardhat does not check that this file matches `version`, so the
// package is pinned to exactly the same version in package.json.
const SOLC_VERSION = "0.8.34";
const solcWasm = require.resolve("solc/soljson.js");

// London: the newest EVM version every Hyperledger Besu QBFT genesis we target enables
// (no PUSH0 / MCOPY / transient storage needed). See docs/besu.md.
// Optimizer runs 200 through the IR pipeline: ApprovalRegistry must stay under the 24,576-byte code size limit
// Besu enforces, and viaIR makes it about 4.4 KB smaller than the legacy pipeline (19.6 KB against 24.0 KB).
const EVM_VERSION = "london";

const compiler = (runs: number) => ({
  version: SOLC_VERSION,
  path: solcWasm,
  settings: {
    evmVersion: EVM_VERSION,
    optimizer: { enabled: true, runs },
    viaIR: true,
  },
});

export default defineConfig({
  plugins: [hardhatToolboxMochaEthers],
  solidity: {
    profiles: {
      default: compiler(200),
      production: compiler(200),
    },
  },
  paths: {
    tests: { mocha: "test/contracts", solidity: "test/solidity" },
    // Ignition journals: the embedded stack keeps its own under DATA_DIR (IGNITION_DIR), beside the chain it describes.
    ignition: process.env.IGNITION_DIR ?? "ignition",
  },
  test: {
    solidity: {
      fuzz: { runs: 1_000, seed: "0x5eed" },
      invariant: { runs: 64, depth: 32, failOnRevert: false },
    },
  },
  networks: {
    // In-process chain at the London hardfork, the EVM version Besu runs our contracts on: gas figures match.
    london: { type: "edr-simulated", chainType: "l1", hardfork: "london" },
    localhost: { type: "http", url: process.env.CHAIN_RPC_URL ?? "http://127.0.0.1:8545" },
    besu: {
      type: "http",
      chainType: "l1",
      url: configVariable("BESU_RPC_URL"),
      chainId: Number(process.env.BESU_CHAIN_ID ?? 1337),
      accounts: [configVariable("BESU_DEPLOYER_KEY")],
      gasPrice: 0,
    },
  },
});
