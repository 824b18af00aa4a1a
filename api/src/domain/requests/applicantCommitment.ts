/**
 * A holder proves a licence is theirs without the chain naming them: the mint records
 * commitment = keccak256(salt ‖ UTF-8 applicant id) in LicenceMinted (an event, no storage). The salt (32 random
 * bytes) stays off chain and is given only to the applicant; whoever holds both can show them to a verifier, who
 * recomputes the commitment and compares it with the one on chain.
 */
import { randomBytes } from "node:crypto";
import { concat, hexlify, keccak256, toUtf8Bytes } from "ethers";

export function newSalt(): string {
  return hexlify(randomBytes(32));
}

export function applicantCommitment(salt: string, applicantId: string): string {
  return keccak256(concat([salt, toUtf8Bytes(applicantId)]));
}
