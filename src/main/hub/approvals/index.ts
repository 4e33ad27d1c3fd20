/** Approvals: the broker (the kernel's policy), session grants and standing rules. */
export { ApprovalBroker } from './broker';
export type { RuleScope } from './scope';
export { setApprovalTimeout } from './settings';
