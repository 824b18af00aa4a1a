/**
 * How long a department wallet change must wait in public: at least a day, so that a department (and anyone
 * watching) can see a proposed wallet and cancel it before it can decide. Only the development chain (chain id
 * 31337: Hardhat's and anvil's default, and the embedded stack's) may be shorter, so that tests and the demo can
 * wait a change out. The chain id decides, not what a deployment file says about itself: the auditor checks the
 * file's chain id against the RPC endpoint, so a real network cannot pass for the development chain. The deploy
 * script refuses a shorter delay and the auditor reports one, by this one rule.
 */
export const MIN_WALLET_DELAY_SECONDS = 24 * 60 * 60;
export const DEVELOPMENT_CHAIN_ID = 31337;

/** Why `walletDelay` seconds is too short on `chainId`, or undefined when it is long enough there. */
export function shortWalletDelay(chainId: number, walletDelay: number): string | undefined {
  if (chainId === DEVELOPMENT_CHAIN_ID || walletDelay >= MIN_WALLET_DELAY_SECONDS) return undefined;
  return `${walletDelay} s, under ${MIN_WALLET_DELAY_SECONDS} s (24 h) on chain ${chainId}: a department would have less than a day to see and cancel a change of its wallet (only the development chain ${DEVELOPMENT_CHAIN_ID} may be shorter)`;
}
