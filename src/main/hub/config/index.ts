/** Config: `config.json`, validated, watched, last-good on breakage, edited atomically. */
export { ConfigStore, ruleId } from './store';
export type { ExternalDriverEntry, FleetSettings, StandingRuleSchema } from './store';
