/** Credentials: named agents and their token hashes. */
export { AgentCredentialStore } from './agents';
export type { AgentCredential, AgentSummary } from './agents';
