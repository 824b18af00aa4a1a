import { expect } from "chai";
import { normalisedWebhookUrl } from "../../api/src/domain/webhooks/manageWebhooks.ts";
import { hostOf } from "../../api/src/webhooks/deliver.ts";

describe("one webhook target, however it is spelled (normalisedWebhookUrl, hostOf)", function () {
  it("gives two spellings of one target the same form", function () {
    const same = [
      ["HTTPS://Hooks.Example.ORG/in", "https://hooks.example.org/in"],
      ["https://hooks.example.org:443/in", "https://hooks.example.org/in"],
      ["http://hooks.example.org:80", "http://hooks.example.org/"],
      ["https://hooks.example.org/in#fragment", "https://hooks.example.org/in"],
      ["https://hooks.example.org/a/../in", "https://hooks.example.org/in"],
      ["http://[0:0:0:0:0:0:0:1]:9/x", "http://[::1]:9/x"],
    ];
    for (const [a, b] of same) expect(normalisedWebhookUrl(a), a).to.equal(normalisedWebhookUrl(b));
  });

  it("keeps different targets apart: path, query, port and scheme count", function () {
    const base = "https://hooks.example.org/in";
    for (const other of [
      "https://hooks.example.org/in/",
      "https://hooks.example.org/IN",
      "https://hooks.example.org/in?x=1",
      "https://hooks.example.org:8443/in",
      "http://hooks.example.org/in",
    ])
      expect(normalisedWebhookUrl(other), other).to.not.equal(normalisedWebhookUrl(base));
  });

  it("counts deliveries per host name or address, whatever the port or path", function () {
    expect(hostOf("https://Hooks.Example.org:8443/a")).to.equal("hooks.example.org");
    expect(hostOf("http://127.0.0.1:9/b")).to.equal(hostOf("http://127.0.0.1:10/c"));
    expect(hostOf("http://[::1]:9/x")).to.equal("[::1]");
  });
});
