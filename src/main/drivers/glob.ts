/**
 * The one glob matcher behind every allow, deny and rule list (tmux `write_allow`/`read_deny`,
 * desktop `read_deny`, the standing rules' `channel`/`op`/`agent`). Drivers and the hub import it
 * from here so that a pattern means the same thing wherever a human writes it.
 *
 * Why not a glob library: they compile patterns to regular expressions, which backtrack
 * exponentially in the number of `*` — `*a*a*a*a*a*a*b` against a 100-character pane title took
 * minutes — and the names matched here come from panes and windows an agent controls. This walk
 * is linear in the name for each star it backs up to (at worst name × pattern steps), and only
 * `*` and `?` are special, so there is no syntax to escape and no pattern that fails to compile.
 */

const cache = new Map<string, readonly string[]>();
const CACHE_LIMIT = 512;

/** A pattern as code points, with runs of `*` folded into one; compiled once, bounded cache. */
function compile(pattern: string): readonly string[] {
  let cps = cache.get(pattern);
  if (cps) return cps;
  cps = Array.from(pattern).filter((c, i, all) => !(c === '*' && all[i - 1] === '*'));
  // Patterns come from config and rules, so the cache stays small; the oldest entry goes first.
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(pattern, cps);
  return cps;
}

/**
 * Whether `name` matches the glob `pattern`, compared as a whole name (anchored at both ends).
 *
 * - `*` matches any run of characters, including none, `/` and dots (a leading dot too);
 *   `?` matches exactly one Unicode code point (`a?b` matches `a😀b` and `a/b`).
 * - Every other character matches only itself, case-sensitively and without normalisation:
 *   no brace expansion, brackets, extglobs, negation or backslash escapes (`[x]`, `{a,b}`,
 *   `!x`, `@(x)`, `\` are literal), and no globstar (`**` is `*`). A literal `*` or `?` in a
 *   name is matched by `?`.
 * - Names are not paths: `/` is an ordinary character.
 */
export function globMatch(pattern: string, name: string): boolean {
  const p = compile(pattern);
  const s = Array.from(name);
  let i = 0;
  let j = 0;
  // The last `*` seen and the name position it currently stands for: on a mismatch the star
  // takes one more character and matching resumes after it. Earlier stars never need to move.
  let star = -1;
  let mark = 0;
  while (j < s.length) {
    if (i < p.length && p[i] !== '*' && (p[i] === '?' || p[i] === s[j])) {
      i++;
      j++;
    } else if (i < p.length && p[i] === '*') {
      star = i++;
      mark = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++mark;
    } else {
      return false;
    }
  }
  while (i < p.length && p[i] === '*') i++;
  return i === p.length;
}
