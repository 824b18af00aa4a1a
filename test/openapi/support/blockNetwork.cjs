/**
 * Preloaded (NODE_OPTIONS=--require) into a tool that must run offline: every TCP connection and DNS lookup it tries
 * is written to $NETWORK_ATTEMPTS_FILE and fails. Unix sockets and loopback are not network access.
 */
const fs = require("node:fs");
const net = require("node:net");
const dns = require("node:dns");

const file = process.env.NETWORK_ATTEMPTS_FILE;
const record = (what) => fs.appendFileSync(file, `${what}\n`);
const local = (host) => host === undefined || host === "localhost" || /^(127\.|::1$|::ffff:127\.)/.test(String(host));

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options =
    args[0] && typeof args[0] === "object"
      ? Array.isArray(args[0])
        ? args[0][0]
        : args[0]
      : { port: args[0], host: typeof args[1] === "string" ? args[1] : undefined };
  if (options && !options.path && !local(options.host)) {
    record(`connect ${options.host}:${options.port}`);
    process.nextTick(() => this.destroy(new Error("network access is blocked here")));
    return this;
  }
  return connect.apply(this, args);
};

for (const target of [dns, dns.promises]) {
  const lookup = target.lookup;
  target.lookup = function (host, ...rest) {
    if (!local(host)) record(`dns ${host}`);
    return lookup.call(this, host, ...rest);
  };
}
