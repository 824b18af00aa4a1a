/** A request's timeline lists events in the order they happened (chain position), its creation never shown after the mint it caused. */
import { expect } from "chai";
import { timelineFromRows, type TimelineRows } from "../../api/src/reads/timelineReads.ts";
import type { RequestView } from "../../api/src/reads/requestReads.ts";

describe("timeline order (timelineFromRows)", function () {
  const request = {
    id: "00000000-0000-4000-8000-000000000001",
    requestNumber: "RL-2026-000001",
    requestType: "RESORT_LICENSE",
    tokenId: 1n,
    applicantId: "alice",
    applicantName: "Alice",
    applicantAddress: "0x0000000000000000000000000000000000000001",
    createdBy: "applicant:alice",
    // The API's clock: 700 ms into the second in which the mint's block was sealed.
    createdAt: new Date("2026-03-01T12:00:00.700Z"),
  } as unknown as RequestView;
  const second = Date.parse("2026-03-01T12:00:00Z") / 1000;
  const rows: TimelineRows = {
    licence: [{ created_block: "5", created_tx: "0xmint", created_at: String(second) }],
    // Rows arrive in any order; the timeline orders them by block, then log index.
    statuses: [
      {
        id: "s2",
        from_status: "SUBMITTED",
        to_status: "APPROVED",
        reason_code: "0",
        block_number: "9",
        log_index: "3",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
      {
        id: "s1",
        from_status: "DRAFT",
        to_status: "SUBMITTED",
        reason_code: "0",
        block_number: "7",
        log_index: "0",
        tx_hash: "0xsubmit",
        timestamp: String(second + 2),
      },
    ],
    versions: [
      {
        sha256_hash: "0xdoc",
        document_id: "d1",
        version: "1",
        block_number: "6",
        tx_hash: "0xdoc",
        timestamp: String(second + 1),
        doc_type: "SITE_PLAN",
        uploaded_by: "applicant:alice",
      },
    ],
    decisions: [
      {
        id: "a1",
        department_id: "1",
        stage: "0",
        decision: "APPROVED",
        reason_code: "0",
        block_number: "9",
        log_index: "1",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
    ],
    stages: [
      {
        id: "c1",
        stage: "0",
        event_type: "StageCompleted",
        detail: {},
        block_number: "9",
        log_index: "2",
        tx_hash: "0xapprove",
        timestamp: String(second + 4),
      },
    ],
    departments: [{ department_id: "1", code: "FIRE", name: "Fire department" }],
    administrators: [{ client_id: "admin-7a400e0d2778" }],
  };

  it("lists the creation first and never stamps it after the mint it caused", function () {
    const events = timelineFromRows(request, rows);
    expect(events.map((e) => e.eventType)).to.deep.equal([
      "REQUEST_CREATED",
      "NFT_MINTED",
      "DOCUMENT_UPLOADED",
      "REQUEST_SUBMITTED",
      "APPROVAL_RECEIVED",
      "STAGE_COMPLETED",
      "REQUEST_APPROVED",
    ]);
    const times = events.map((e) => Date.parse(e.timestamp));
    for (let i = 1; i < times.length; i++)
      expect(times[i], `${events[i].eventType} after ${events[i - 1].eventType}`).to.be.at.least(times[i - 1]);
    expect(events[0].timestamp).to.equal("2026-03-01T12:00:00.000Z");
  });

  it("keeps the API's time of creation when it is before the mint's block", function () {
    const early = { ...request, createdAt: new Date("2026-03-01T11:59:59.250Z") } as RequestView;
    expect(timelineFromRows(early, rows)[0].timestamp).to.equal("2026-03-01T11:59:59.250Z");
  });

  it("shows who recorded an event by role (Administrator, System client, Applicant), never by client id", function () {
    const byAdmin = { ...request, createdBy: "client:admin-7a400e0d2778" } as RequestView;
    const versions = [{ ...rows.versions[0], uploaded_by: "client:cli_0123456789abcdef0123" }];
    const events = timelineFromRows(byAdmin, { ...rows, versions });
    const actorOf = (type: string) => events.find((e) => e.eventType === type)!.actor;
    expect(actorOf("REQUEST_CREATED")).to.deep.equal({ type: "ADMIN", id: "administrator", name: "Administrator" });
    expect(actorOf("DOCUMENT_UPLOADED")).to.deep.equal({ type: "SYSTEM", id: "system-client", name: "System client" });
    expect(actorOf("APPROVAL_RECEIVED")).to.deep.equal({ type: "DEPARTMENT", id: "FIRE", name: "Fire department" });
    expect(JSON.stringify(events)).to.not.match(/admin-7a400e0d2778|cli_0123|client:/);
    expect(timelineFromRows(request, rows)[0].actor).to.deep.equal({ type: "APPLICANT", id: "alice", name: "Alice" });
  });

  it("numbers stages from 1 in what it says and in its metadata", function () {
    // A reopening from the second stage back to the first (the index keeps the chain's indexes, from 0).
    const reopened = {
      id: "r1",
      stage: "0",
      event_type: "StageReopened",
      detail: { fromStage: "1", toStage: "0" },
      block_number: "8",
      log_index: "0",
      tx_hash: "0xreopen",
      timestamp: String(second + 3),
    };
    const events = timelineFromRows(request, { ...rows, stages: [...rows.stages, reopened] });
    const approval = events.find((e) => e.eventType === "APPROVAL_RECEIVED")!;
    expect(approval.description).to.equal("FIRE approved (stage 1)");
    expect(approval.metadata).to.deep.equal({ stage: 1, reasonCode: 0 });
    const completed = events.find((e) => e.eventType === "STAGE_COMPLETED")!;
    expect(completed.description).to.equal("Stage 1 completed");
    expect(completed.metadata).to.deep.equal({ stage: 1 });
    const back = events.find((e) => e.eventType === "STAGE_REOPENED")!;
    expect(back.description).to.equal("A document update sent the review back to stage 1");
    expect(back.metadata).to.deep.equal({ stage: 1, fromStage: 2, toStage: 1 });
  });
});
