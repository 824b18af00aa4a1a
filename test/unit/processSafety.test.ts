import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "chai";
import { loadConfig } from "../../api/src/config.ts";
import { createHttpServer } from "../../api/src/http/httpServer.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The API process's own safety nets: explicit HTTP time limits, and a logger for unhandled rejections. */
describe("the API process's safety nets", function () {
  describe("HTTP limits: slow clients, and what the HTTP parser refuses", function () {
    let server: ReturnType<typeof createHttpServer>;
    let port: number;
    before(async function () {
      // Like the API, it answers once it has read the request's body.
      server = createHttpServer((request, response) => request.resume().on("end", () => response.end("ok")), {
        headersMs: 300,
        requestMs: 600,
        checkEveryMs: 50,
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as net.AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    /** Sends `text` and never more; resolves with what the server answered before closing, and after how long. */
    const sendAndWait = (text: string) =>
      new Promise<{ answer: string; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
        let answer = "";
        socket.on("data", (chunk) => (answer += chunk));
        socket.on("close", () => resolve({ answer, ms: Date.now() - started }));
        socket.on("error", reject);
        setTimeout(() => socket.destroy(new Error("the server kept a slow client")), 5_000).unref();
      });

    it("answers 408 and disconnects a client whose headers do not arrive in time", async function () {
      const { answer, ms } = await sendAndWait("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      expect(answer).to.match(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.split("\r\n\r\n")[1])).to.include({ code: "REQUEST_TIMEOUT" });
      expect(ms).to.be.below(2_000);
    });

    it("answers 408 and disconnects a client whose body does not arrive in time", async function () {
      const { answer, ms } = await sendAndWait(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\nonly a little",
      );
      expect(answer).to.match(/^HTTP\/1\.1 408 /);
      expect(ms).to.be.below(2_500);
    });

    it("answers a request line and headers over 16 KiB with 431 in the error shape", async function () {
      const { answer } = await sendAndWait(`GET /verify/qr/${"q".repeat(17_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const [head, body] = answer.split("\r\n\r\n");
      expect(head)
        .to.match(/^HTTP\/1\.1 431 /)
        .and.match(/content-type: application\/json/i);
      expect(JSON.parse(body)).to.deep.equal({
        code: "HEADERS_TOO_LARGE",
        message: "The request line and headers are larger than 16 KiB",
      });
    });

    it("answers what is not HTTP with 400 in the error shape", async function () {
      const { answer } = await sendAndWait("NOT HTTP AT ALL\r\n\r\n");
      expect(answer).to.match(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.split("\r\n\r\n")[1])).to.include({ code: "BAD_REQUEST" });
    });

    it("still answers a request that arrives in time", async function () {
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).to.equal("ok");
    });

    it("has explicit defaults: 20 s for the headers, 120 s for a whole request", function () {
      expect(loadConfig({})).to.include({ headersTimeoutMs: 20_000, requestTimeoutMs: 120_000 });
    });
  });

  it("logs an unhandled promise rejection and keeps the process running", async function () {
    const script = [
      `import { createLogger } from ${JSON.stringify(path.join(root, "api/src/observability/logger.ts"))};`,
      `import { logUnhandledRejections } from ${JSON.stringify(path.join(root, "api/src/observability/processErrors.ts"))};`,
      `logUnhandledRejections(createLogger("info"));`,
      `Promise.reject(new Error("nobody handled this"));`,
      `setTimeout(() => console.log("still serving"), 200);`,
    ].join("\n");
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
    });
    const logged = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line));
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({ level: 50, msg: "unhandled promise rejection" });
    expect(logged[0].err.message).to.equal("nobody handled this");
    expect(stdout).to.include("still serving");
  });
});
