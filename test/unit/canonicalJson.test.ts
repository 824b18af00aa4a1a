import { expect } from "chai";
import { canonicalJson } from "../../api/src/encoding/canonicalJson.ts";

describe("canonicalJson (api/src/encoding/canonicalJson.ts)", function () {
  it("sorts object keys at every level, so equal values give equal text", function () {
    const a = { b: 1, a: { d: [{ y: 2, x: 1 }], c: "z" } };
    const b = { a: { c: "z", d: [{ x: 1, y: 2 }] }, b: 1 };
    expect(canonicalJson(a)).to.equal('{"a":{"c":"z","d":[{"x":1,"y":2}]},"b":1}');
    expect(canonicalJson(b)).to.equal(canonicalJson(a));
  });

  it("keeps array order (an array's order is part of its value)", function () {
    expect(canonicalJson([2, 1])).to.equal("[2,1]");
    expect(canonicalJson([2, 1])).to.not.equal(canonicalJson([1, 2]));
  });

  it("drops undefined properties as JSON.stringify does, and keeps null", function () {
    expect(canonicalJson({ a: undefined, b: null })).to.equal('{"b":null}');
  });

  it("escapes keys and strings as JSON", function () {
    expect(canonicalJson({ 'q"uote': "line\nbreak" })).to.equal('{"q\\"uote":"line\\nbreak"}');
    expect(JSON.parse(canonicalJson({ 'q"uote': "line\nbreak" }))).to.deep.equal({ 'q"uote': "line\nbreak" });
  });
});
