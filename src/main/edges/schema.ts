/**
 * The edges' JSON Schema checks (MCP tool arguments, panel calls and events): the kernel's own
 * validator, which checks a payload and never changes it, and its one wording of the first error
 * (a pointer and keyword, never the offending value: it may be a secret pasted into the wrong
 * field). Op args are the kernel's to validate.
 *
 * The one reach of an edge past the hub: the hub's index must load no validator (a CLI command
 * forwarded to a running hub relies on that), and only the edges that check payloads load this.
 */
export { describeSchemaError, schemaValidator as compileSchema } from '../kernel';
