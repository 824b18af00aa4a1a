/**
 * Private keys at rest: AES-256-GCM under the master key, each with its own random 96-bit IV and bound to its
 * wallet address as associated data (a ciphertext moved to another wallet's row does not decrypt).
 * Layout: iv (12) | tag (16) | ciphertext (32).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

export class KeyVault {
  readonly #key: Buffer;

  constructor(masterKeyHex: string) {
    const key = Buffer.from(masterKeyHex.replace(/^0x/, ""), "hex");
    if (key.length !== 32) throw new Error("master key must be 32 bytes");
    this.#key = key;
  }

  seal(privateKeyHex: string, address: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(address.toLowerCase()));
    const ciphertext = Buffer.concat([
      cipher.update(Buffer.from(privateKeyHex.replace(/^0x/, ""), "hex")),
      cipher.final(),
    ]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  open(sealed: Buffer, address: string): string {
    const decipher = createDecipheriv("aes-256-gcm", this.#key, sealed.subarray(0, 12));
    decipher.setAAD(Buffer.from(address.toLowerCase()));
    decipher.setAuthTag(sealed.subarray(12, 28));
    return `0x${Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("hex")}`;
  }

  /** Never let the key reach a log through util.inspect or JSON. */
  toJSON() {
    return "[KeyVault]";
  }
  [Symbol.for("nodejs.util.inspect.custom")]() {
    return "[KeyVault]";
  }
}
