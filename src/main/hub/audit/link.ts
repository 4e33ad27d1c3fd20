/**
 * The chain link every audit row carries beside the record's fields (see chain.ts): declared once,
 * like the record, so its columns and their migration derive from it. Not part of the record
 * agents, the panel or `uplink log` see: it is how the store proves the record, not what it says.
 */
import { Type } from '@sinclair/typebox';

export const AuditLink = Type.Object({
  /** The hash of the record before this one (the genesis hash for the first). */
  prev_hash: Type.Optional(Type.String()),
  /** sha256 over `prev_hash` and this record's canonical form (chain.ts). */
  hash: Type.Optional(Type.String()),
});
