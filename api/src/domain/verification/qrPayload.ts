/**
 * A licence's QR payload: compact, self-describing, signed by the platform's issuer key.
 *
 *   LAP1.<chainId>.<licence contract, 40 hex digits>.<tokenId>.<signature, base64url>
 *
 * The signature is an EIP-191 personal signature by the issuer key over everything before the last dot, so anyone
 * can check it with common Ethereum tooling (`ethers.verifyMessage`) against the issuer address the platform
 * publishes (GET /verify/issuer). The QR code holds the URL of the public verification page with the payload, so a
 * phone's camera opens the answer; /verify/qr/{qrCode} accepts the payload alone or that URL.
 */
import { getAddress, Signature, verifyMessage, Wallet } from "ethers";

const PREFIX = "LAP1";

export interface QrClaim {
  chainId: number;
  contract: string;
  tokenId: bigint;
}

export class QrIssuer {
  readonly #wallet: Wallet;
  constructor(privateKey: string) {
    this.#wallet = new Wallet(privateKey);
  }
  get address(): string {
    return this.#wallet.address;
  }
  async sign(claim: QrClaim): Promise<string> {
    const message = messageOf(claim);
    const signature = Signature.from(await this.#wallet.signMessage(message)).serialized;
    return `${message}.${Buffer.from(signature.slice(2), "hex").toString("base64url")}`;
  }
}

const messageOf = (claim: QrClaim) =>
  `${PREFIX}.${claim.chainId}.${claim.contract.slice(2).toLowerCase()}.${claim.tokenId}`;

/** The payload out of what was scanned: the payload itself, or a URL carrying it as `qr=`. */
export function payloadFrom(scanned: string): string {
  const text = scanned.trim();
  if (text.startsWith(PREFIX)) return text;
  try {
    return new URL(text).searchParams.get("qr") ?? text;
  } catch {
    return text;
  }
}

/** The claim, when the payload is well formed and signed by `issuer`; otherwise undefined (INVALID_QR). */
export function verifyPayload(scanned: string, issuer: string): QrClaim | undefined {
  const match = /^LAP1\.(\d{1,10})\.([0-9a-f]{40})\.(\d{1,13})\.([A-Za-z0-9_-]{80,90})$/.exec(payloadFrom(scanned));
  if (!match) return undefined;
  const claim: QrClaim = {
    chainId: Number(match[1]),
    contract: getAddress(`0x${match[2]}`),
    tokenId: BigInt(match[3]),
  };
  try {
    const signature = `0x${Buffer.from(match[4], "base64url").toString("hex")}`;
    return verifyMessage(messageOf(claim), signature) === issuer ? claim : undefined;
  } catch {
    return undefined;
  }
}
