import { expect } from "chai";
import { applicantToken, clientToken, createClient } from "./support/authClient.ts";
import { eventually } from "./support/eventually.ts";
import { apiClient as client, type Json, expectError } from "./support/httpClient.ts";
import { createDriver, type Driver } from "./support/platformDriver.ts";
import { pdf } from "./support/sampleFiles.ts";
import { seedWorkflow } from "./support/seedWorkflow.ts";
import { adminSession } from "./support/sessions.ts";
import { current } from "./support/stackFixture.ts";
import { stage, workflow } from "./support/workflowDefinition.ts";

describe("delegations: a system client acts only for the applicants who delegated to it", function () {
  const run = `${Date.now() % 1e7}`;
  const carolId = `carol-${run}`;
  const daveId = `dave-${run}`;
  let api: string;
  let driver: Driver;
  let admin: ReturnType<typeof client>;
  let carol: ReturnType<typeof client>;
  let dave: ReturnType<typeof client>;
  let portal: ReturnType<typeof client>;
  let portalId: string;
  let othersPortal: ReturnType<typeof client>;
  let othersPortalId: string;

  const auditActions = async (applicantId: string) =>
    (
      await driver.core.pool.query(
        `SELECT action, actor_type, actor_id, new_value, old_value FROM audit_logs WHERE entity_type = 'APPLICANT' AND entity_id = $1 AND action <> 'SIGN_IN' ORDER BY created_at`,
        [applicantId],
      )
    ).rows;

  before(async function () {
    const stack = current();
    driver = await createDriver(stack);
    let adminToken: string;
    ({ api, adminToken, admin } = await adminSession(stack));
    await seedWorkflow(
      stack,
      driver,
      workflow(
        "BUILDING_PERMIT",
        `Building permit (delegations ${run})`,
        stage("review", "Review", "PARALLEL", { [`DELEG_${run}`]: ["SITE_PLAN"] }),
      ),
    );
    carol = client(api, await applicantToken(api, { id: carolId, name: "Carol Citizen", email: "carol@example.org" }));
    dave = client(api, await applicantToken(api, { id: daveId, name: "Dave Other" }));
    const scopes = ["applications:read", "applications:write", "documents:read", "documents:write"];
    const [intake, other] = await Promise.all([
      createClient(api, adminToken, `intake portal ${run}`, scopes),
      createClient(api, adminToken, `other portal ${run}`, scopes),
    ]);
    portalId = intake.clientId;
    portal = client(api, await clientToken(api, intake.clientId, intake.clientSecret));
    othersPortalId = other.clientId;
    othersPortal = client(api, await clientToken(api, other.clientId, other.clientSecret));
  });
  after(async () => driver?.close());

  describe("POST, GET and DELETE /delegations", function () {
    it("lets an applicant grant, renew, list and revoke a delegation, each audited; the client lists who delegated to it", async function () {
      const granted = await carol.post("/delegations", { clientId: portalId });
      expect(granted.status, JSON.stringify(granted.body)).to.equal(201);
      expect(granted.body).to.deep.include({
        applicantId: carolId,
        applicantName: "Carol Citizen",
        clientId: portalId,
        clientName: `intake portal ${run}`,
      });
      expect((await carol.post("/delegations", { clientId: portalId })).status).to.equal(200);

      const mine = await carol.get("/delegations");
      expect(mine.status).to.equal(200);
      expect(mine.body.delegations.map((d: Json) => d.clientId)).to.deep.equal([portalId]);
      const theirs = await portal.get("/delegations");
      expect(theirs.body.delegations.map((d: Json) => d.applicantId)).to.deep.equal([carolId]);
      expect((await othersPortal.get("/delegations")).body.delegations).to.deep.equal([]);

      expect((await carol.delete(`/delegations/${portalId}`)).status).to.equal(204);
      expectError(await carol.delete(`/delegations/${portalId}`), 404, "NOT_FOUND");
      expect((await carol.get("/delegations")).body.delegations).to.deep.equal([]);
      expect((await portal.get("/delegations")).body.delegations).to.deep.equal([]);

      const audited = await auditActions(carolId);
      expect(audited.map((r) => [r.action, r.actor_type, r.actor_id])).to.deep.equal([
        ["DELEGATE", "APPLICANT", carolId],
        ["DELEGATE", "APPLICANT", carolId],
        ["REVOKE_DELEGATION", "APPLICANT", carolId],
      ]);
      expect(audited[0].new_value).to.deep.include({ clientId: portalId, renewed: false });
      expect(audited[1].new_value).to.deep.include({ renewed: true });
      expect(audited[2].old_value).to.deep.equal({ clientId: portalId });
    });

    it("answers 404 for an unknown, revoked or administrator client, and lets only applicants grant", async function () {
      const stack = current();
      for (const clientId of ["cli_0000000000000000000", stack.admin.clientId]) {
        const refused = await dave.post("/delegations", { clientId });
        expect(refused.status, clientId).to.equal(404);
        expect(refused.body.code).to.equal("NOT_FOUND");
      }
      const revoked = await createClient(api, (await adminSession(stack)).adminToken, `revoked portal ${run}`, [
        "applications:write",
      ]);
      expect((await admin.delete(`/admin/clients/${revoked.clientId}`)).status).to.equal(204);
      expectError(await dave.post("/delegations", { clientId: revoked.clientId }), 404);
      expectError(await portal.post("/delegations", { clientId: othersPortalId }), 403);
      expectError(await client(api).post("/delegations", { clientId: portalId }), 401);
    });
  });

  describe("what a system client may do", function () {
    let delegatedRequest: string;
    let daveRequest: string;

    before(async function () {
      expect((await carol.post("/delegations", { clientId: portalId })).status).to.be.oneOf([200, 201]);
      const made = await dave.post("/requests", { applicantId: daveId, requestType: "BUILDING_PERMIT" });
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      daveRequest = made.body.requestId;
    });

    it("creates requests only for an applicant who delegated to it (403 otherwise), named after the applicant's own sign-in, never the body", async function () {
      const refused = await portal.post("/requests", { applicantId: daveId, requestType: "BUILDING_PERMIT" });
      expect(refused.status).to.equal(403);
      expect(refused.body).to.have.keys("code", "message");
      expect(refused.body.code).to.equal("FORBIDDEN");
      expectError(await othersPortal.post("/requests", { applicantId: carolId, requestType: "BUILDING_PERMIT" }), 403);

      const made = await portal.post("/requests", {
        applicantId: carolId,
        requestType: "BUILDING_PERMIT",
        metadata: { applicantName: "Mallory Impostor", applicantEmail: "mallory@example.org" },
      });
      expect(made.status, JSON.stringify(made.body)).to.equal(201);
      delegatedRequest = made.body.requestId;
      const detail = await carol.get(`/requests/${delegatedRequest}`);
      expect(detail.body.applicant).to.deep.equal({ id: carolId, name: "Carol Citizen", email: "carol@example.org" });
      const row = await driver.core.pool.query(`SELECT applicant_name, applicant_email FROM requests WHERE id = $1`, [
        delegatedRequest,
      ]);
      expect(row.rows[0]).to.deep.equal({ applicant_name: "Carol Citizen", applicant_email: "carol@example.org" });
    });

    it("reads, uploads to and lists only the delegating applicants' requests; another applicant's are 404", async function () {
      expect((await portal.get(`/requests/${delegatedRequest}`)).status).to.equal(200);
      const uploaded = await portal.upload(
        "POST",
        `/requests/${delegatedRequest}/documents`,
        pdf(`delegated upload ${run}`),
        "plan.pdf",
        { docType: "SITE_PLAN" },
      );
      expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
      expect((await portal.get(`/requests/${delegatedRequest}/documents`)).status).to.equal(200);

      for (const path of ["", "/timeline", "/documents", "/approvals"]) {
        const hidden = await portal.get(`/requests/${daveRequest}${path}`);
        expect(hidden.status, path).to.equal(404);
        expect(hidden.body.code).to.equal("NOT_FOUND");
      }
      expectError(await portal.post(`/requests/${daveRequest}/submit`), 404);
      expectError(await portal.post(`/requests/${daveRequest}/cancel`, { reason: "not mine" }), 404);
      const upload = await portal.upload("POST", `/requests/${daveRequest}/documents`, pdf(`x ${run}`), "p.pdf", {
        docType: "SITE_PLAN",
      });
      expect(upload.status).to.equal(404);

      const listed = await portal.get("/requests?limit=100");
      expect(listed.status).to.equal(200);
      const ids = listed.body.requests.map((r: Json) => r.requestId);
      expect(ids).to.include(delegatedRequest);
      expect(ids).to.not.include(daveRequest);
      expect(listed.body.pagination.total).to.equal(ids.length);
      expect((await portal.get(`/requests?applicantId=${daveId}`)).body.requests).to.deep.equal([]);
      // The administrator keeps seeing everyone's.
      expect((await admin.get(`/requests/${daveRequest}`)).status).to.equal(200);
    });

    it("submits for the delegating applicant, and loses every right the moment the delegation is revoked", async function () {
      expect((await portal.post(`/requests/${delegatedRequest}/submit`)).status).to.equal(200);
      const second = await portal.post("/requests", { applicantId: carolId, requestType: "BUILDING_PERMIT" });
      expect(second.status).to.equal(201);

      expect((await carol.delete(`/delegations/${portalId}`)).status).to.equal(204);
      expectError(await portal.get(`/requests/${delegatedRequest}`), 404);
      expectError(await portal.post(`/requests/${second.body.requestId}/cancel`, {}), 404);
      expectError(await portal.post("/requests", { applicantId: carolId, requestType: "BUILDING_PERMIT" }), 403);
      expect((await portal.get("/requests")).body.requests).to.deep.equal([]);
      // The applicant still has it all.
      expect((await carol.post(`/requests/${second.body.requestId}/cancel`, {})).status).to.equal(200);
    });

    it("shows who acted on the applicant's timeline by role, never by client id", async function () {
      const timeline = (await carol.get(`/requests/${delegatedRequest}/timeline`)).body.events as Json[];
      const created = timeline.find((e) => e.eventType === "REQUEST_CREATED")!;
      expect(created.actor).to.deep.equal({ type: "SYSTEM", id: "system-client", name: "System client" });
      const uploaded = timeline.find((e) => e.eventType === "DOCUMENT_UPLOADED")!;
      expect(uploaded.actor).to.deep.equal({ type: "SYSTEM", id: "system-client", name: "System client" });

      const byAdmin = await admin.post("/requests", { applicantId: carolId, requestType: "BUILDING_PERMIT" });
      expect(byAdmin.status).to.equal(201);
      const adminTimeline = (await carol.get(`/requests/${byAdmin.body.requestId}/timeline`)).body.events as Json[];
      expect(adminTimeline.find((e) => e.eventType === "REQUEST_CREATED")!.actor).to.deep.equal({
        type: "ADMIN",
        id: "administrator",
        name: "Administrator",
      });
      // The administrator's request is named after the applicant's own sign-in too.
      expect((await carol.get(`/requests/${byAdmin.body.requestId}`)).body.applicant.name).to.equal("Carol Citizen");

      const shown = JSON.stringify([timeline, adminTimeline]);
      for (const clientId of [portalId, current().admin.clientId]) expect(shown).to.not.include(clientId);
      expect(shown).to.not.include("client:");
    });

    it("shows who uploaded each document version by role, to the applicant and the administrator alike, never by client id", async function () {
      // The system client's upload (above), then an administrator's first version and the applicant's second.
      const delegatedDocs = (await carol.get(`/requests/${delegatedRequest}/documents`)).body.documents as Json[];
      const byPortal = delegatedDocs[0].documentId as string;
      const draft = await admin.post("/requests", { applicantId: carolId, requestType: "BUILDING_PERMIT" });
      expect(draft.status).to.equal(201);
      const first = await admin.upload(
        "POST",
        `/requests/${draft.body.requestId}/documents`,
        pdf(`admin upload ${run}`),
        "plan.pdf",
        { docType: "SITE_PLAN" },
      );
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      const second = await carol.upload(
        "PUT",
        `/requests/${draft.body.requestId}/documents/${first.body.documentId}`,
        pdf(`applicant update ${run}`),
        "plan-v2.pdf",
      );
      expect(second.status, JSON.stringify(second.body)).to.equal(200);

      for (const reader of [carol, admin]) {
        const portalDoc = await reader.get(`/documents/${byPortal}`);
        expect(portalDoc.status).to.equal(200);
        expect(portalDoc.body.versions.map((v: Json) => v.uploadedBy)).to.deep.equal(["System client"]);
        const shared = await eventually("both versions indexed", async () => {
          const read = await reader.get(`/documents/${first.body.documentId}`);
          return read.body.versions?.length === 2 ? read : undefined;
        });
        expect(shared.body.versions.map((v: Json) => v.uploadedBy)).to.deep.equal(["Administrator", "Applicant"]);
        const shown = JSON.stringify([portalDoc.body, shared.body]);
        for (const clientId of [portalId, current().admin.clientId]) expect(shown).to.not.include(clientId);
        expect(shown).to.not.include("client:");
      }
    });
  });
});
