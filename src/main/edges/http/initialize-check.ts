/**
 * The SDK's HTTP transport asks of every message POSTed whether it is an `initialize` request,
 * twice, by parsing it against the whole initialize schema, and a failed parse builds an error
 * with all its issues. Under load that was a tenth of the hub's CPU, for calls that are never
 * `initialize`. A message whose `method` is not the string "initialize" cannot match the schema's
 * literal, so its parse now fails at once (the error is built only if something reads it); a
 * message that says "initialize" is parsed as before.
 */
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';

type SafeParse = (value: unknown, params?: unknown) => { success: boolean; error?: unknown; data?: unknown };
const QUICK = Symbol('uplink.quickInitializeCheck');

/** Installs the quick failure on the SDK's initialize schema (once per process). */
export function quickInitializeCheck(): void {
  const schema = InitializeRequestSchema as unknown as { safeParse: SafeParse & { [QUICK]?: true } };
  if (schema.safeParse[QUICK]) return;
  const full = schema.safeParse;
  const quick: SafeParse & { [QUICK]?: true } = (value, params) => {
    if (value !== null && typeof value === 'object' && (value as { method?: unknown }).method === 'initialize') return full(value, params);
    let error: unknown;
    return {
      success: false,
      get error(): unknown {
        return (error ??= full(value, params).error);
      },
    };
  };
  quick[QUICK] = true;
  schema.safeParse = quick;
}
