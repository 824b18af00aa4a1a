/**
 * Departments for stack tests, over HTTP like any caller:
 * - createDepartment: POST /departments with an admin token → its code, API key and secret, wallet;
 * - departmentClient: calls as that department (X-API-Key + X-Department-Code), signing every request when asked
 *   (X-Timestamp + X-Signature, the rules in api/src/auth/requestSigning.ts).
 */
import { canonicalJson } from "../../../api/src/encoding/canonicalJson.ts";
import { signatureHeaders } from "../../../api/src/auth/requestSigning.ts";
import { apiClient, httpResult, type HttpResult, type Json } from "./httpClient.ts";

export interface DepartmentCredentials {
  code: string;
  apiKey: string;
  apiSecret: string;
}

export interface CreatedTestDepartment extends DepartmentCredentials {
  walletAddress: string;
  /** The whole 201 body. */
  body: Json;
}

/** What signs a department-held wallet's key proof: the wallet itself (an ethers wallet), or a Safe's owners. */
export type KeySigner = (typedData: Json) => Promise<string>;

/** An EOA's key proof: the wallet signs the DepartmentKey typed data as it comes. */
export const eoaKeySigner =
  (wallet: { signTypedData(domain: Json, types: Json, message: Json): Promise<string> }): KeySigner =>
  async ({ domain, types, message }) => {
    const { EIP712Domain: _domain, ...rest } = types;
    return wallet.signTypedData(domain, rest, message);
  };

/** The DepartmentKey typed data the API hands out (POST /departments/key-proof-typed-data), signed by `sign`. */
export async function keyProof(
  apiUrl: string,
  adminToken: string,
  input: { code: string; custody: "CUSTODIAL" | "DEPARTMENT_HELD"; walletAddress: string },
  sign: KeySigner,
): Promise<string> {
  const { status, body } = await apiClient(apiUrl, adminToken).post("/departments/key-proof-typed-data", input);
  if (status !== 200) throw new Error(`key proof typed data: ${status} ${JSON.stringify(body)}`);
  return sign(body);
}

/**
 * Registers a department (admin token) and returns its credentials; throws unless 201. A department that holds its
 * own key gives `keyHolder`, which signs its key proof (or `keyProof` itself).
 */
export async function createDepartment(
  apiUrl: string,
  adminToken: string,
  input: {
    code: string;
    name: string;
    webhookUrl?: string;
    requireSignedRequests?: boolean;
    custody?: "CUSTODIAL" | "DEPARTMENT_HELD";
    walletAddress?: string;
    keyProof?: string;
    keyHolder?: KeySigner;
  },
): Promise<CreatedTestDepartment> {
  const { keyHolder, ...fields } = input;
  const proof =
    keyHolder && input.walletAddress
      ? await keyProof(
          apiUrl,
          adminToken,
          { code: input.code, custody: "DEPARTMENT_HELD", walletAddress: input.walletAddress },
          keyHolder,
        )
      : input.keyProof;
  const { status, body } = await apiClient(apiUrl, adminToken).post("/departments", {
    ...fields,
    ...(proof ? { keyProof: proof } : {}),
  });
  if (status !== 201) throw new Error(`department creation failed: ${status} ${JSON.stringify(body)}`);
  return { code: body.code, apiKey: body.apiKey, apiSecret: body.apiSecret, walletAddress: body.walletAddress, body };
}

/**
 * A client calling as the department. `sign: true` signs every request (the body is sent as canonical JSON, so its
 * hash is that of the bytes sent). `extra` headers override the computed ones (e.g. a stale X-Timestamp in tests).
 */
export function departmentClient(apiUrl: string, credentials: DepartmentCredentials, options: { sign?: boolean } = {}) {
  const call = async (
    method: string,
    route: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<HttpResult> => {
    const target = `/api/v1${route}`;
    const headers: Record<string, string> = {
      "x-api-key": credentials.apiKey,
      "x-department-code": credentials.code,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(options.sign ? signatureHeaders(credentials.apiSecret, method, target, body) : {}),
      ...extra,
    };
    return httpResult(
      await fetch(`${apiUrl}${target}`, {
        method,
        headers,
        body: body === undefined ? undefined : canonicalJson(body),
      }),
    );
  };
  return {
    get: (route: string, extra?: Record<string, string>) => call("GET", route, undefined, extra),
    post: (route: string, body?: unknown, extra?: Record<string, string>) => call("POST", route, body, extra),
    patch: (route: string, body?: unknown, extra?: Record<string, string>) => call("PATCH", route, body, extra),
    put: (route: string, body?: unknown, extra?: Record<string, string>) => call("PUT", route, body, extra),
    delete: (route: string, extra?: Record<string, string>) => call("DELETE", route, undefined, extra),
    /** Raw call: full control over method, body value and headers. */
    call,
  };
}
