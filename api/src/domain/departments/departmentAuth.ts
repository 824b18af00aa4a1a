/** Department API-key authentication (STUB: replaced by the implementation). */
import type { DepartmentKeyCheck } from "../../auth/index.ts";
import type { DomainContext } from "../context.ts";

export function createDepartmentKeyCheck(_context: Omit<DomainContext, "departmentKeys">): DepartmentKeyCheck {
  return async () => undefined;
}
