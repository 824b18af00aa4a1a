/** GET /admin/blockchain/status: what the RPC node, its peers and the validator set say now. */
import type { DomainContext } from "./context.ts";

export const blockchainStatus = (context: Pick<DomainContext, "gateway">) => context.gateway.networkStatus();
