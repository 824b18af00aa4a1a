/**
 * Generators (fast-check arbitraries) of hostile input for the property-based fuzz tests: adversarial strings and
 * keys, wrong-typed JSON values, mutations of a valid body at any depth, raw bodies (invalid JSON, wrong content
 * types and encodings, duplicate keys, deep nesting, long arrays, oversized), query strings, and multipart forms
 * (random bytes, disguised files, missing or repeated fields, oversized fields, many parts, broken framing).
 *
 * JSON bodies are serialised by `toJsonText`, not JSON.stringify, so that a generated value can hold what JSON.stringify
 * cannot express: raw JSON text spliced in (`raw`: 10^5 levels of nesting, 1e400, -0) and duplicate keys (`DUPLICATES`).
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { executable, jpeg, pdf, png } from "./sampleFiles.ts";

// ---------------------------------------------------------------------------------------------------------------
// JSON values with raw splices and duplicate keys

export const RAW = Symbol("raw JSON text");
export const DUPLICATES = Symbol("duplicate keys, written before the object's own keys");

export interface RawJson {
  [RAW]: string;
  label: string;
}

export const raw = (
  text: string,
  label = text.length > 60 ? `${text.slice(0, 40)}… (${text.length} chars)` : text,
): RawJson => ({ [RAW]: text, label });
const isRaw = (value: unknown): value is RawJson => typeof value === "object" && value !== null && RAW in value;

/** An object whose keys may be anything, including `__proto__` (defined as an own property, never as the prototype). */
export function dict(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** JSON text of `value`: raw splices verbatim, duplicate keys written, non-finite numbers as null, undefined dropped. */
export function toJsonText(value: unknown): string {
  if (isRaw(value)) return value[RAW];
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => toJsonText(v)).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toJSON?.() ?? null);
  const parts: string[] = [];
  for (const [key, v] of (value as { [DUPLICATES]?: [string, unknown][] })[DUPLICATES] ?? [])
    parts.push(`${JSON.stringify(key)}:${toJsonText(v)}`);
  for (const [key, v] of Object.entries(value))
    if (v !== undefined) parts.push(`${JSON.stringify(key)}:${toJsonText(v)}`);
  return `{${parts.join(",")}}`;
}

/** A copy of `value` (plain data, raw splices and duplicate keys kept). */
export function cloneValue<T>(value: T): T {
  if (isRaw(value) || typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => cloneValue(v)) as T;
  const copy = dict(Object.entries(value).map(([k, v]) => [k, cloneValue(v)]));
  const dupes = (value as { [DUPLICATES]?: [string, unknown][] })[DUPLICATES];
  if (dupes) (copy as { [DUPLICATES]?: [string, unknown][] })[DUPLICATES] = dupes.map(([k, v]) => [k, cloneValue(v)]);
  return copy as T;
}

/** A short, printable description of a body for failure messages (fast-check prints the shrunk case with it). */
export function preview(text: string | Buffer, max = 600): string {
  const s = typeof text === "string" ? text : text.toString("latin1");
  const shown = s.length > max ? `${s.slice(0, max)}… (${s.length} chars in all)` : s;
  return JSON.stringify(shown);
}

// ---------------------------------------------------------------------------------------------------------------
// Strings, keys, values

/** Hand-picked hostile strings: injection, traversal, encodings, unicode edge cases, look-alikes of valid values. */
export const NASTY_STRINGS: readonly string[] = [
  "",
  " ",
  "  leading and trailing  ",
  "\t",
  "\r\n",
  "\n\n\n",
  "\u0000",
  "a\u0000b",
  "%00",
  "\\u0000",
  "\u0007\u001b[31m",
  "../../../../etc/passwd",
  "..\\..\\..\\windows\\win.ini",
  "..%2F..%2Fetc%2Fpasswd",
  "/",
  "//",
  ".",
  "..",
  "%2e%2e%2f",
  "file:///etc/passwd",
  "%",
  "%zz",
  "%E0%A4%A",
  "%C0%AF",
  "+",
  "&",
  "=",
  "?",
  "#",
  ";",
  "' OR '1'='1",
  "1; DROP TABLE requests; --",
  '"; SELECT pg_sleep(5); --',
  "' UNION SELECT * FROM app.wallets --",
  "$1",
  "%s%s%s%n",
  '{"$gt": ""}',
  '{"$where": "sleep(1000)"}',
  "[object Object]",
  "null",
  "undefined",
  "NaN",
  "Infinity",
  "-Infinity",
  "true",
  "false",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "__defineGetter__",
  "0",
  "-1",
  "1e309",
  "-0",
  "0x10",
  "1.5",
  "99999999999999999999999999999",
  "9007199254740993",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF",
  "00000000-0000-0000-0000-00000000000g",
  "0x" + "0".repeat(64),
  "0x" + "f".repeat(64),
  "f".repeat(64),
  "0x" + "f".repeat(63),
  "<script>alert(1)</script>",
  "javascript:alert(1)",
  "${jndi:ldap://127.0.0.1/a}",
  "{{7*7}}",
  "#{7*7}",
  "<%= 7*7 %>",
  "😀",
  "👨‍👩‍👧‍👦",
  "\ud800",
  "\udfff",
  "\ud83d",
  "\ufeff",
  "\u202e\u202d",
  "\u200b",
  "Ω≈ç√∫",
  "ＡＢＣ",
  "İıß",
  "ǅ",
  "\uffff",
  "\u{10ffff}",
  "A_B",
  "FIRE",
  "BUILDING_PERMIT",
  "TRADE_LICENSE",
  "admin",
  "ADMIN",
  "a".repeat(65),
  "a".repeat(129),
  "a".repeat(257),
  "a".repeat(1001),
  "a".repeat(4001),
];

/** The nasty strings, binary and grapheme noise, NUL in the middle, and `long` for the rest. */
const hostileStrings = (long: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([a, b]) => `${a}\u0000${b}`),
    },
    { weight: 1, arbitrary: long },
  );

/** Hostile strings of any size (up to ~70 kB): for JSON bodies and form fields. */
export const adversarialString: fc.Arbitrary<string> = hostileStrings(
  fc.integer({ min: 5_000, max: 70_000 }).map((n) => "x".repeat(n)),
);

/** Hostile strings that still fit in a URL (a request line over Node's 16 kB header limit is refused before the app). */
export const adversarialUrlString: fc.Arbitrary<string> = hostileStrings(
  fc.integer({ min: 200, max: 2_000 }).map((n) => "9".repeat(n)),
);

/** Object keys an attacker would try: prototype pollution, operators, traversal, empty, huge. */
export const adversarialKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "__proto__",
      "constructor",
      "prototype",
      "toString",
      "valueOf",
      "hasOwnProperty",
      "__defineSetter__",
      "isAdmin",
      "$where",
      "$gt",
      "",
      " ",
      "\u0000",
      "a.b",
      "a[b]",
      "../x",
      "😀",
      "k".repeat(1_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** Values of every JSON type and shape, most of them wrong wherever they land. */
export const adversarialJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: adversarialString },
  { weight: 1, arbitrary: fc.integer() },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, 5e-324, 0.5, 255, 256, 4001),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      raw("1e400"),
      raw("-1e400"),
      raw("-0"),
      raw("1.0"),
      raw("123456789012345678901234567890"),
      raw("0.0000000000000000000000001"),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(true, false, null) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>([], {}, [null], [[]], [{}], { "": null }) },
  { weight: 1, arbitrary: fc.array(adversarialString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 17, max: 50_000 })
      .map((n) =>
        raw(
          `[${Array.from({ length: n }, (_, i) => `"00000000-0000-4000-8000-${String(i).padStart(12, "0")}"`).join(",")}]`,
          `array of ${n} uuids`,
        ),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1_000, max: 100_000 })
      .map((n) => raw(`${"[".repeat(n)}${"]".repeat(n)}`, `${n} nested arrays`)),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1_000, max: 100_000 })
      .map((n) => raw(`${'{"a":'.repeat(n)}1${"}".repeat(n)}`, `${n} nested objects`)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      raw('{"__proto__":{"isAdmin":true,"polluted":"yes"}}'),
      raw('{"constructor":{"prototype":{"polluted":"yes"}}}'),
      raw('{"__proto__":null}'),
      raw('{"toString":"x","valueOf":1,"hasOwnProperty":null}'),
      raw('{"a":1,"a":{"__proto__":[]}}'),
    ),
  },
);

// ---------------------------------------------------------------------------------------------------------------
// Mutations of a valid body

export interface Mutation {
  op: "replace" | "remove" | "add" | "duplicate" | "wrap";
  /** Which node of the body (index into its nodes, modulo their number; 0 is the root). */
  at: number;
  key: string;
  value: unknown;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom<Mutation["op"]>("replace", "replace", "replace", "remove", "remove", "add", "duplicate", "wrap"),
  at: fc.nat({ max: 1_000 }),
  key: adversarialKey,
  value: adversarialJson,
});

type Path = (string | number)[];

function nodes(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (isRaw(value) || typeof value !== "object" || value === null) return out;
  if (Array.isArray(value)) value.forEach((v, i) => nodes(v, [...path, i], out));
  else for (const [k, v] of Object.entries(value)) nodes(v, [...path, k], out);
  return out;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

function setAt(root: unknown, path: Path, next: unknown): unknown {
  if (path.length === 0) return next;
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1];
  if (Array.isArray(parent)) parent[key as number] = next;
  else Object.defineProperty(parent, key, { value: next, enumerable: true, writable: true, configurable: true });
  return root;
}

/** Applies the mutations in turn to a copy of `base`; `undefined` means "no body at all". */
export function mutate(base: unknown, mutations: Mutation[]): unknown {
  let body = cloneValue(base);
  for (const m of mutations) {
    const all = nodes(body);
    const path = all[m.at % all.length];
    const node = getAt(body, path);
    switch (m.op) {
      case "replace":
        body = setAt(body, path, m.value);
        break;
      case "remove":
        if (path.length === 0) body = undefined;
        else {
          const parent = getAt(body, path.slice(0, -1));
          const key = path[path.length - 1];
          if (Array.isArray(parent)) parent.splice(key as number, 1);
          else delete (parent as Record<string, unknown>)[key as string];
        }
        break;
      case "add":
        if (Array.isArray(node)) node.push(m.value);
        else if (node && typeof node === "object" && !isRaw(node))
          Object.defineProperty(node, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        else body = setAt(body, path, dict([[m.key, m.value]]));
        break;
      case "duplicate": {
        const target =
          node && typeof node === "object" && !Array.isArray(node) && !isRaw(node)
            ? (node as Record<string | symbol, unknown>)
            : undefined;
        if (!target) {
          body = setAt(body, path, [node, node]);
          break;
        }
        // Repeat an existing key (its first occurrence carries the hostile value; JSON.parse keeps the last one)...
        const existing = Object.keys(target);
        const key = existing.length > 0 ? existing[m.at % existing.length] : m.key;
        const dupes = (target[DUPLICATES] as [string, unknown][] | undefined) ?? [];
        dupes.push([key, m.value]);
        target[DUPLICATES] = dupes;
        break;
      }
      case "wrap":
        body = setAt(body, path, m.at % 2 === 0 ? [node] : dict([["value", node]]));
        break;
    }
  }
  return body;
}

// ---------------------------------------------------------------------------------------------------------------
// Raw bodies

export interface RawBody {
  label: string;
  /** undefined: no Content-Type header at all. */
  contentType?: string;
  body?: Buffer | string;
  headers?: Record<string, string>;
}

const INVALID_JSON_TEXTS = [
  "{",
  "}",
  "[",
  '{"a":}',
  '{"a" 1}',
  "{'a': 1}",
  "{a: 1}",
  "[1,]",
  '{"a":1,}',
  '{"a":1}garbage',
  '{"a":1}{"b":2}',
  "NaN",
  "undefined",
  "\u0000",
  '{"a":"\u0000"}',
  '"unterminated',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":+1}',
  '{"a":Infinity}',
  "//comment\n{}",
  "/* c */ {}",
  '"just a string"',
  "123",
  "true",
  "null",
  "[]",
  "{}",
  " ",
  "\n",
];

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/json; charset=latin1",
  "application/json; charset=bogus",
  "application/JSON",
  "application/vnd.api+json",
  "application/json;;;",
  "application/json; boundary=x",
  "text/plain",
  "text/html",
  "application/xml",
  "application/x-www-form-urlencoded",
  "multipart/form-data",
  "multipart/form-data; boundary=----x",
  "application/octet-stream",
  "*/*",
  "",
  "json",
  "application/",
];

/** Hostile bodies for a JSON (or form) endpoint; `validText` is the endpoint's valid body, for the wrong-wrapper cases. */
export function rawBody(validText: string): fc.Arbitrary<RawBody> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(...INVALID_JSON_TEXTS)
        .map((text): RawBody => ({ label: "invalid JSON", contentType: "application/json", body: text })),
    },
    {
      weight: 1,
      arbitrary: fc
        .string({ unit: "binary", maxLength: 200 })
        .map((text): RawBody => ({ label: "random text as JSON", contentType: "application/json", body: text })),
    },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes): RawBody => ({
        label: "random bytes as JSON",
        contentType: "application/json",
        body: Buffer.from(bytes),
      })),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(...CONTENT_TYPES).map((type): RawBody => ({
        label: `valid body as ${type || "(empty type)"}`,
        contentType: type,
        body: validText,
      })),
    },
    { weight: 1, arbitrary: fc.constant<RawBody>({ label: "valid body without Content-Type", body: validText }) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...CONTENT_TYPES)
        .map((type): RawBody => ({ label: `empty body as ${type || "(empty type)"}`, contentType: type, body: "" })),
    },
    { weight: 1, arbitrary: fc.constant<RawBody>({ label: "no body, no Content-Type" }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<RawBody>(
        { label: "BOM + valid body", contentType: "application/json", body: `\ufeff${validText}` },
        {
          label: "UTF-16LE body declared utf-16",
          contentType: "application/json; charset=utf-16",
          body: Buffer.from(`\ufeff${validText}`, "utf16le"),
        },
        {
          label: "UTF-16LE body declared utf-8",
          contentType: "application/json",
          body: Buffer.from(validText, "utf16le"),
        },
        {
          label: "latin1 bytes",
          contentType: "application/json",
          body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0xff, 0x22, 0x7d]),
        },
        {
          label: "gzip declared, garbage sent",
          contentType: "application/json",
          body: "not gzip at all",
          headers: { "content-encoding": "gzip" },
        },
        {
          label: "deflate declared, garbage sent",
          contentType: "application/json",
          body: "\u0000\u0001garbage",
          headers: { "content-encoding": "deflate" },
        },
        {
          label: "br declared, garbage sent",
          contentType: "application/json",
          body: "garbage",
          headers: { "content-encoding": "br" },
        },
        {
          label: "unknown content-encoding",
          contentType: "application/json",
          body: validText,
          headers: { "content-encoding": "x-evil" },
        },
        {
          label: "duplicate top-level keys",
          contentType: "application/json",
          body:
            validText.startsWith("{") && validText.length > 2 ? `{"a":1,"a":2,${validText.slice(1)}` : `{"a":1,"a":2}`,
        },
        {
          label: "over the JSON limit (1.2 MB)",
          contentType: "application/json",
          body: `{"x":"${"a".repeat(1_200_000)}"}`,
        },
        {
          label: "over the form limit (100 kB)",
          contentType: "application/x-www-form-urlencoded",
          body: `x=${"a".repeat(100_000)}`,
        },
        {
          label: "200k nested arrays",
          contentType: "application/json",
          body: `${"[".repeat(200_000)}${"]".repeat(200_000)}`,
        },
        {
          label: "form with nested/prototype keys",
          contentType: "application/x-www-form-urlencoded",
          body: "__proto__[isAdmin]=1&constructor[prototype][x]=1&a[b][c][d][e][f][g]=1&a[]=1&a[]=2",
        },
        {
          label: "form with 2000 keys",
          contentType: "application/x-www-form-urlencoded",
          body: Array.from({ length: 2000 }, (_, i) => `k${i}=${i}`).join("&"),
        },
        {
          label: "form with broken percent-encoding",
          contentType: "application/x-www-form-urlencoded",
          body: "grant_type=%zz&client_id=%E0%A4%A&x=%",
        },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(fc.jsonValue(), fc.object(), fc.anything()).map((value): RawBody => ({
        label: "arbitrary value",
        contentType: "application/json",
        body: toJsonText(value),
      })),
    },
  );
}

/** Arbitrary JSON documents (fc.jsonValue, fc.object, fc.anything) with hostile bits mixed in. */
export const arbitraryJsonBody: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 2, arbitrary: fc.object({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
  {
    weight: 1,
    arbitrary: fc.dictionary(adversarialKey, adversarialJson, { maxKeys: 5 }).map((o) => dict(Object.entries(o))),
  },
  { weight: 1, arbitrary: adversarialJson },
);

/** application/x-www-form-urlencoded text of a value (qs-style brackets for nesting, repeated keys for arrays). */
export function toFormText(value: unknown): string {
  const pairs: string[] = [];
  const scalar = (v: unknown) =>
    isRaw(v) ? v[RAW] : v === null || v === undefined ? "" : typeof v === "object" ? toJsonText(v) : String(v);
  const walk = (prefix: string, v: unknown) => {
    if (Array.isArray(v)) v.forEach((item) => walk(prefix, item));
    else if (v && typeof v === "object" && !isRaw(v))
      for (const [k, child] of Object.entries(v)) walk(prefix ? `${prefix}[${k}]` : k, child);
    else pairs.push(`${encodeForm(prefix)}=${encodeForm(scalar(v))}`);
  };
  if (value && typeof value === "object" && !Array.isArray(value) && !isRaw(value)) {
    for (const [key, v] of (value as { [DUPLICATES]?: [string, unknown][] })[DUPLICATES] ?? []) walk(key, v);
    walk("", value);
  } else pairs.push(encodeForm(scalar(value)));
  return pairs.join("&");
}

function encodeForm(value: string): string {
  let out = "";
  for (const char of Array.from(value)) {
    if (/^[A-Za-z0-9\-_.~]$/.test(char)) out += char;
    else if (char === " ") out += "+";
    else for (const byte of Buffer.from(char, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Query strings

export interface QueryParam {
  name: string;
  /** A valid value (used for required parameters and as one of the choices). */
  valid?: string;
  enumValues?: string[];
}

/** A value for one query parameter: absent, valid, a near miss, or hostile. */
function paramValue(p: QueryParam): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 1, arbitrary: fc.constant(p.valid ?? p.enumValues?.[0]) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...(p.enumValues?.length ? p.enumValues.map((v) => v.toLowerCase()) : ["0"]),
        "0",
        "-1",
        "1e9",
        "NaN",
        "1.5",
        "99999999999999999999",
        "2025-13-45",
        "2024-02-30",
        "9999-12-31T23:59:59Z",
      ),
    },
    { weight: 4, arbitrary: adversarialUrlString },
  );
}

/**
 * [key, value, encoded?] triples for a query string. Mostly ONE declared parameter is hostile and the others are
 * absent, so that the hostile value is what reaches the handler (with many bad parameters validation stops at the
 * first); also all parameters at once, a parameter repeated, and unknown or prototype keys.
 */
export function queryPairs(params: QueryParam[]): fc.Arbitrary<[string, string, boolean][]> {
  const options: { weight: number; arbitrary: fc.Arbitrary<[string, string, boolean][]> }[] = [
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(fc.tuple(adversarialKey, adversarialUrlString), { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([pairs, encoded]) => pairs.map(([k, v]) => [k, v, encoded] as [string, string, boolean])),
    },
  ];
  if (params.length > 0) {
    options.push(
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.nat({ max: params.length - 1 }), adversarialUrlString, fc.boolean())
          .map(([i, v, encoded]) => [[params[i].name, v, encoded]]),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.tuple(...params.map((p) => paramValue(p))), fc.boolean())
          .map(([values, encoded]) =>
            params.flatMap((p, i) =>
              values[i] === undefined ? [] : [[p.name, values[i]!, encoded] as [string, string, boolean]],
            ),
          ),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.nat({ max: params.length - 1 }),
            fc.array(fc.oneof(adversarialUrlString, fc.constantFrom("1", "true", "asc")), {
              minLength: 2,
              maxLength: 3,
            }),
          )
          .map(([i, values]) => values.map((v) => [params[i].name, v, true] as [string, string, boolean])),
      },
    );
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------------------------
// Multipart

export interface Part {
  /** Form field name; undefined: no Content-Disposition at all. */
  name?: string;
  filename?: string;
  contentType?: string;
  content: Buffer;
}

export interface MultipartCase {
  label: string;
  parts: Part[];
  /** Header's boundary: "same" (correct), "other" (not the one used), "none" (no boundary parameter). */
  boundary: "same" | "other" | "none";
  contentType: string;
  lineEnding: "\r\n" | "\n";
  /** Drop the closing boundary and cut the body short. */
  truncated: boolean;
  preamble: string;
  /** Send without Content-Length (chunked), so only the streaming limits apply. */
  chunked: boolean;
}

const BOUNDARY = "----fuzzBoundary7MA4YWxkTrZu0gW";

/** A well-formed form of these parts: the right boundary, CRLF, closed, with a Content-Length. */
export const wellFormed = (label: string, parts: Part[]): MultipartCase => ({
  label,
  parts,
  boundary: "same",
  contentType: "multipart/form-data",
  lineEnding: "\r\n",
  truncated: false,
  preamble: "",
  chunked: false,
});

/** Text parts of a form's fields, in order. */
export const textParts = (fields: Record<string, string>): Part[] =>
  Object.entries(fields).map(([name, v]) => ({ name, content: Buffer.from(v, "utf8") }));

export function buildMultipart(c: MultipartCase): { body: Buffer | Buffer[]; contentType: string } {
  const eol = c.lineEnding;
  const chunks: Buffer[] = [];
  if (c.preamble) chunks.push(Buffer.from(c.preamble + eol));
  for (const part of c.parts) {
    const head = [`--${BOUNDARY}`];
    if (part.name !== undefined) {
      head.push(
        `Content-Disposition: form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ""}`,
      );
    }
    if (part.contentType !== undefined) head.push(`Content-Type: ${part.contentType}`);
    chunks.push(Buffer.from(head.join(eol) + eol + eol, "utf8"), part.content, Buffer.from(eol));
  }
  if (!c.truncated) chunks.push(Buffer.from(`--${BOUNDARY}--${eol}`));
  let body = Buffer.concat(chunks);
  if (c.truncated) body = body.subarray(0, Math.max(0, body.length - 7));
  const boundary =
    c.boundary === "same" ? `; boundary=${BOUNDARY}` : c.boundary === "other" ? "; boundary=notTheBoundaryUsed" : "";
  const contentType = c.contentType.startsWith("multipart/form-data") ? `${c.contentType}${boundary}` : c.contentType;
  if (!c.chunked) return { body, contentType };
  const pieces: Buffer[] = [];
  for (let i = 0; i < body.length; i += 64 * 1024) pieces.push(body.subarray(i, i + 64 * 1024));
  return { body: pieces.length ? pieces : [Buffer.alloc(0)], contentType };
}

/** Makes this run's valid files differ from every earlier run's (the chain refuses a hash anchored before). */
const RUN_NONCE = randomUUID();

/** File contents: valid documents of each type (unique bytes), impostors, random bytes, empty. */
export const fileContent: fc.Arbitrary<{ label: string; bytes: Buffer }> = fc.oneof(
  { weight: 2, arbitrary: fc.nat().map((n) => ({ label: "pdf", bytes: pdf(`fuzz ${n} ${RUN_NONCE}`) })) },
  { weight: 1, arbitrary: fc.nat().map((n) => ({ label: "png", bytes: png(`fuzz ${n} ${RUN_NONCE}`, n) })) },
  { weight: 1, arbitrary: fc.nat().map((n) => ({ label: "jpeg", bytes: jpeg(`fuzz ${n} ${RUN_NONCE}`) })) },
  { weight: 1, arbitrary: fc.constant({ label: "exe", bytes: executable() }) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 2_048 }).map((b) => ({ label: "random bytes", bytes: Buffer.from(b) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { label: "empty", bytes: Buffer.alloc(0) },
      { label: "magic only (%PDF-)", bytes: Buffer.from("%PDF-") },
      { label: "truncated magic (%PD)", bytes: Buffer.from("%PD") },
      {
        label: "PNG magic + garbage",
        bytes: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from("garbage")]),
      },
      { label: "JPEG magic only", bytes: Buffer.from([0xff, 0xd8, 0xff]) },
      { label: "html", bytes: Buffer.from("<html><script>alert(1)</script></html>") },
      {
        label: "text containing the boundary",
        bytes: Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="docType"\r\n\r\nX`),
      },
    ),
  },
);

export const fileName: fc.Arbitrary<string | undefined> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "document.pdf",
      "scan.png",
      "photo.jpg",
      "photo.JPEG",
      "evil.exe",
      "a.pdf.exe",
      "a.exe.pdf",
      "noext",
      ".pdf",
      "archive.tar.gz",
      "résumé.pdf",
      "x".repeat(300) + ".pdf",
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "../../../etc/passwd",
      "..\\..\\boot.ini",
      "/abs/path.pdf",
      "C:\\\\evil.pdf",
      "a%00.pdf",
      "a\u0000.pdf",
      "con.pdf",
      "file;name=x.pdf",
      "",
      " ",
    ),
  },
  { weight: 1, arbitrary: adversarialUrlString.map((s) => s.replace(/["\r\n]/g, "")) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

export const partContentType: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    "application/pdf",
    "image/png",
    "image/jpeg",
    "application/octet-stream",
    "application/x-msdownload",
    "text/html",
    "image/png; charset=binary",
    "multipart/mixed",
    "IMAGE/PNG",
    "application/x-pdf",
    "image/pjpeg",
  ),
  fc.constant(undefined),
);

export interface MultipartPlan {
  /** Text fields of the valid form (e.g. docType), in order. */
  fields: Record<string, string>;
  /** A valid file for the endpoint. */
  file: () => { bytes: Buffer; filename: string; contentType: string };
  /** The endpoint's file size limit: the "oversized file" case sends one byte more. */
  maxFileBytes: number;
}

type Structure =
  | "valid"
  | "no file"
  | "no fields"
  | "two files"
  | "file in another field"
  | "field twice"
  | "many text parts"
  | "oversized text field"
  | "file as text part"
  | "part without disposition"
  | "empty form"
  | "huge field name"
  | "oversized file";

/** Multipart forms for an upload endpoint: the valid form with its file, fields and framing varied. */
export function multipartCase(plan: MultipartPlan): fc.Arbitrary<MultipartCase> {
  const fieldValue = fc.oneof(
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 2, arbitrary: adversarialString },
  );
  return fc
    .record({
      structure: fc.constantFrom<Structure>(
        "valid",
        "valid",
        "valid",
        "no file",
        "no fields",
        "two files",
        "file in another field",
        "field twice",
        "many text parts",
        "oversized text field",
        "file as text part",
        "part without disposition",
        "empty form",
        "huge field name",
        "oversized file",
      ),
      content: fc.oneof(
        { weight: 1, arbitrary: fc.constant<{ label: string; bytes: Buffer } | undefined>(undefined) },
        { weight: 3, arbitrary: fileContent },
      ),
      filename: fc.oneof(
        { weight: 1, arbitrary: fc.constant<string | null>(null) },
        { weight: 3, arbitrary: fileName },
      ),
      partType: fc.oneof(
        { weight: 1, arbitrary: fc.constant<string | null>(null) },
        { weight: 2, arbitrary: partContentType },
      ),
      fieldOverrides: fc.tuple(...Object.keys(plan.fields).map(() => fieldValue)),
      extraField: fc.option(
        fc.tuple(
          adversarialKey.map((k) => k.replace(/["\r\n]/g, "")),
          adversarialString,
        ),
        { nil: undefined },
      ),
      boundary: fc.constantFrom<MultipartCase["boundary"]>("same", "same", "same", "same", "other", "none"),
      contentType: fc.constantFrom(
        "multipart/form-data",
        "multipart/form-data",
        "multipart/form-data",
        "multipart/form-data",
        "MULTIPART/FORM-DATA",
        "multipart/mixed",
        "application/json",
        "text/plain",
      ),
      lineEnding: fc.constantFrom<MultipartCase["lineEnding"]>("\r\n", "\r\n", "\r\n", "\n"),
      truncated: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      preamble: fc.constantFrom("", "", "", "garbage before the first boundary"),
      chunked: fc.boolean(),
    })
    .map((g): MultipartCase => {
      const valid = plan.file();
      const file: Part = {
        name: "file",
        filename: g.filename === null ? valid.filename : g.filename,
        contentType: g.partType === null ? valid.contentType : g.partType,
        content: g.content?.bytes ?? valid.bytes,
      };
      const names = Object.keys(plan.fields);
      const fields: Part[] = names.flatMap((name, i) => {
        const override = g.fieldOverrides[i];
        return [{ name, content: Buffer.from(override ?? plan.fields[name], "utf8") }];
      });
      if (g.extraField) fields.push({ name: g.extraField[0], content: Buffer.from(g.extraField[1], "utf8") });
      let parts: Part[];
      switch (g.structure) {
        case "valid":
          parts = [...fields, file];
          break;
        case "no file":
          parts = fields;
          break;
        case "no fields":
          parts = [file];
          break;
        case "two files":
          parts = [...fields, file, { ...file, filename: "second.pdf" }];
          break;
        case "file in another field":
          parts = [...fields, { ...file, name: "attachment" }];
          break;
        case "field twice":
          parts = [...fields, ...fields, file];
          break;
        case "many text parts":
          parts = [
            ...fields,
            ...Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, content: Buffer.from("x") })),
            file,
          ];
          break;
        case "oversized text field":
          parts = [...fields, { name: "description", content: Buffer.alloc(40 * 1024, 0x61) }, file];
          break;
        case "file as text part":
          parts = [...fields, { name: "file", content: file.content }];
          break;
        case "part without disposition":
          parts = [...fields, { content: file.content, contentType: "application/pdf" }];
          break;
        case "empty form":
          parts = [];
          break;
        case "huge field name":
          parts = [...fields, { name: "n".repeat(20_000), content: Buffer.from("x") }, file];
          break;
        case "oversized file":
          parts = [
            ...fields,
            { ...file, content: Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(plan.maxFileBytes - 8, 0x20)]) },
          ];
          break;
      }
      const label = `${g.structure}; file ${g.content?.label ?? "valid"} named ${JSON.stringify(file.filename)} as ${JSON.stringify(file.contentType)}`;
      return {
        label,
        parts,
        boundary: g.boundary,
        contentType: g.contentType,
        lineEnding: g.lineEnding,
        truncated: g.truncated,
        preamble: g.preamble,
        chunked: g.chunked,
      };
    });
}

/** A short description of a multipart case for failure messages. */
export function describeMultipart(c: MultipartCase): string {
  const parts = c.parts.map((p) => ({
    name: p.name === undefined ? undefined : preview(p.name, 80),
    filename: p.filename === undefined ? undefined : preview(p.filename, 80),
    contentType: p.contentType,
    bytes: p.content.length,
    head: preview(p.content.subarray(0, 24), 40),
  }));
  return JSON.stringify({
    label: c.label,
    contentType: c.contentType,
    boundary: c.boundary,
    lineEnding: JSON.stringify(c.lineEnding),
    truncated: c.truncated,
    preamble: c.preamble,
    chunked: c.chunked,
    parts,
  });
}
