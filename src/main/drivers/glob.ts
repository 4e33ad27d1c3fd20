/**
 * The one glob matcher behind every allow, deny and rule list (tmux `write_allow`/`read_deny`,
 * desktop `read_deny`, the standing rules' `channel`/`op`/`agent`). Drivers and the hub import it
 * from here so that a pattern means the same thing wherever a human writes it.
 */
import picomatch from 'picomatch';

// picomatch matches paths: `*` and `?` stop at `/`, and `*` skips `.` and `..` at the start of a
// segment. A name is one segment: each `/` is swapped for U+FFFF (a noncharacter, never text) in
// both the pattern and the name, and both are prefixed with it so no name starts a segment.
const SLASH = '\uFFFF';
// Regex syntax picomatch hands through to the RegExp it builds (`|`, `{1,2}`, `(…)`, `\b`, …) is
// escaped, so only `*` and `?` are special; the `u` flag makes `?` one code point, not one half
// of an emoji's surrogate pair. `debug` makes a pattern that cannot compile throw rather than
// become a regex that never matches (a deny list must not fail open).
const REGEX_SYNTAX = /[\\^$.+()[\]{}|]/g;
const OPTIONS: picomatch.PicomatchOptions = {
  dot: true, nobrace: true, nobracket: true, noextglob: true, noglobstar: true, nonegate: true,
  fastpaths: false, flags: 'su', debug: true,
};

const cache = new Map<string, RegExp>();
const CACHE_LIMIT = 512;

function compile(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  re = picomatch.makeRe(SLASH + pattern.replace(REGEX_SYNTAX, '\\$&').replaceAll('/', SLASH), OPTIONS);
  // Patterns come from config and rules, so the cache stays small; the oldest entry goes first.
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(pattern, re);
  return re;
}

/**
 * Whether `name` matches the glob `pattern`, compared as a whole name (anchored at both ends).
 *
 * - `*` matches any run of characters, including none, `/` and dots (a leading dot too);
 *   `?` matches exactly one Unicode code point (`a?b` matches `a😀b` and `a/b`).
 * - Every other character matches only itself, case-sensitively and without normalisation:
 *   no brace expansion, brackets, extglobs, negation or backslash escapes (`[x]`, `{a,b}`,
 *   `!x`, `@(x)`, `\` are literal), and no globstar (`**` is `*`).
 * - Names are not paths: `/` is an ordinary character. (A `/` in a pattern also matches the
 *   noncharacter U+FFFF, which text never contains.)
 *
 * Each pattern is compiled once and kept in a bounded cache.
 */
export function globMatch(pattern: string, name: string): boolean {
  return compile(pattern).test(SLASH + name.replaceAll('/', SLASH));
}
