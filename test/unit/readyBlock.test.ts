import { expect } from "chai";
import { readyBlock, type ReadyStack } from "../../scripts/stack/readyBlock.ts";

/** npm start's ready block: it announces the development conveniences, and prints only an admin secret it generated. */
describe("npm start's ready block", function () {
  const stack = (devConveniences: boolean, secretGenerated: boolean): ReadyStack =>
    ({
      config: { chainId: 31337, dataDir: "/data", devConveniences, workerProcesses: 0 },
      api: { url: "http://127.0.0.1:3000" },
      apis: [{}],
      rpcUrl: "http://127.0.0.1:8545",
      chain: {},
      indexer: { url: "http://127.0.0.1:42069" },
      deployment: { contracts: { LicenceToken: "0x1", DocumentRegistry: "0x2", ApprovalRegistry: "0x3" } },
      admin: { clientId: "admin-abc", clientSecret: "s3cret-value", secretGenerated },
    }) as unknown as ReadyStack;

  it("prints a generated admin secret, and says when the development conveniences are on", function () {
    const text = readyBlock(stack(true, true), 12).join("\n");
    expect(text).to.include("DEV_CONVENIENCES=true: passwordless development sign-in and generated secrets are ON");
    expect(text).to.match(/^ID=admin-abc$/m);
    expect(text).to.match(/^SECRET=s3cret-value$/m);
  });

  it("never prints an admin secret the operator supplied, and says nothing of conveniences that are off", function () {
    const text = readyBlock(stack(false, false), 12).join("\n");
    expect(text).to.not.include("s3cret-value");
    expect(text).to.not.match(/^SECRET=/m);
    expect(text).to.include("the ADMIN_CLIENT_SECRET you configured (not shown)");
    expect(text).to.match(/^ID=admin-abc$/m);
    expect(text).to.not.include("DEV_CONVENIENCES");
  });

  it("prints an external chain's RPC URL without its credentials or path (an API key, L6)", function () {
    const external = {
      ...stack(false, false),
      rpcUrl: "https://user:pw@rpc.example.io/v3/0123456789abcdef",
      chain: undefined,
    };
    const text = readyBlock(external as ReadyStack, 12).join("\n");
    expect(text).to.include("Chain RPC    https://***:***@rpc.example.io/***   (chain 31337)");
    expect(text).to.not.include("0123456789abcdef");
  });
});
