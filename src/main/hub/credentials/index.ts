/** Credentials: named agents and their token hashes, the hub's MCP token, the operator's sign-in, and the mask of the live ones. */
export { AgentCredentialStore } from './agents';
export type { AgentCredential, AgentSummary } from './agents';
export { CODE_TTL_MS, SESSION_IDLE_MS, SESSION_TTL_MS, createOperatorAuth, operatorKeyPath, panelSessionsPath, revokePanelSessionsAt } from './operator';
export type { OperatorAuth, OperatorSession } from './operator';
export { secretEquals } from './secret';
export { ensureToken, readToken } from './token';
export { MIN_SECRET_LENGTH, SECRET_MARKER, SecretMask, liveSecrets } from './mask';
