import { expect } from "chai";
import { AppError } from "../../api/src/domain/errors.ts";
import { checkWebhookUrl, isAllowedAddress, parseWebhookUrl } from "../../api/src/webhooks/urlSafety.ts";

const production = { production: true };
const development = { production: false };

describe("webhook URL safety (api/src/webhooks/urlSafety.ts)", function () {
  describe("isAllowedAddress", function () {
    it("allows global unicast addresses only, in production", function () {
      for (const ok of ["8.8.8.8", "2001:4860:4860::8888"]) expect(isAllowedAddress(ok, production), ok).to.equal(true);
      const refused = [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "::1",
        "::ffff:127.0.0.1",
        "::ffff:a9fe:a9fe",
        "fe80::1",
        "fc00::1",
        "64:ff9b::808:808",
        "198.18.0.1",
        "not-an-ip",
      ];
      for (const bad of refused) expect(isAllowedAddress(bad, production), bad).to.equal(false);
    });

    it("also allows loopback in development, and nothing else private", function () {
      expect(isAllowedAddress("127.0.0.1", development)).to.equal(true);
      expect(isAllowedAddress("::1", development)).to.equal(true);
      expect(isAllowedAddress("10.0.0.1", development)).to.equal(false);
    });
  });

  describe("parseWebhookUrl", function () {
    function refusal(fn: () => unknown): AppError {
      try {
        fn();
      } catch (error) {
        expect(error).to.be.instanceOf(AppError);
        expect([(error as AppError).status, (error as AppError).code]).to.deep.equal([400, "INVALID_WEBHOOK_URL"]);
        return error as AppError;
      }
      throw new Error("expected a refusal");
    }

    it("refuses other schemes, credentials and private address literals", function () {
      refusal(() => parseWebhookUrl("ftp://8.8.8.8/", production));
      refusal(() => parseWebhookUrl("https://user:pw@example.com/", production));
      refusal(() => parseWebhookUrl("http://[::ffff:127.0.0.1]/hook", production));
      refusal(() => parseWebhookUrl("not a url", production));
      expect(parseWebhookUrl("https://8.8.8.8/hook", production)).to.include({ host: "8.8.8.8", literal: true });
    });
  });

  describe("checkWebhookUrl", function () {
    it("refuses a name any of whose addresses is refused, without echoing the address", async function () {
      const resolve = async () => [
        { address: "8.8.8.8", family: 4 },
        { address: "10.1.2.3", family: 4 },
      ];
      const error = await checkWebhookUrl("https://hooks.example/x", { ...production, resolve }).catch(
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).message).to.not.contain("10.1.2.3");
    });

    it("accepts a name whose addresses are all public, and refuses one that does not resolve", async function () {
      const url = await checkWebhookUrl("https://hooks.example/x", {
        ...production,
        resolve: async () => [{ address: "8.8.4.4", family: 4 }],
      });
      expect(url.href).to.equal("https://hooks.example/x");
      const error = await checkWebhookUrl("https://nowhere.example/", { ...production, resolve: async () => [] }).catch(
        (e: unknown) => e,
      );
      expect((error as AppError).code).to.equal("INVALID_WEBHOOK_URL");
    });
  });
});
