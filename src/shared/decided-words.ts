/**
 * One wording of how an approved call ended, for every place that shows a decision next to its
 * call's outcome (the panel's "Recently decided", the timeline, the audit): an approval followed
 * by a failure reads "approved once, then failed: <reason>", never a green approval beside a bare
 * failure mark.
 */

/** The decision in words followed by how the call ended, when it did not succeed. */
export function decidedThenEnded(decision: string, granted: boolean, outcome: string | undefined, message: string | undefined): string {
  if (!granted || outcome === undefined || outcome === 'succeeded') return decision;
  const how = outcome.replace('_', ' ');
  return `${decision}, then ${how}${message ? `: ${message}` : ''}`;
}
