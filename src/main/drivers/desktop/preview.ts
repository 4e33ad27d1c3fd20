/**
 * What the operator sees before approving a desktop action: the action in words and a fresh
 * screenshot of the bound window with the target point or element marked (in image pixels), and
 * warnings when that screenshot may not show what the action meets (covered, blank, missing).
 * A preview never throws: when the target cannot be shown, the words say why.
 */
import { middleClip } from '../../../shared/risk';
import type { JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { ApprovalPreview } from '../contract';
import type { Binding } from './binding';
import { DEFAULT_PREVIEW_MAX_WIDTH } from './config';
import type { HelperTarget } from './protocol';

type Call = (op: string, extra: { target?: HelperTarget; args?: JsonValue; interaction?: 'semantic_ui' | 'visual_ui' }) => Promise<JsonValue>;

/** Inputs of `buildPreview`. */
export interface PreviewInput {
  addr: string;
  op: string;
  args: JsonValue;
  binding: Binding | undefined;
  checkedTarget: (addr: string) => Promise<HelperTarget>;
  call: Call;
  maxWidth: number | undefined;
}

interface Shot {
  png_base64: string;
  width: number;
  height: number;
  scale?: number;
  warnings?: string[];
}
interface ElementFacts {
  role: string;
  name: string;
  path: string;
  bounds: { x: number; y: number; width: number; height: number } | null;
}

/** A text as the summary quotes it: cut in the middle (its end stays visible), with its length when cut. */
const quote = (s: string, max = 80): string => {
  const { text, cut } = middleClip(s, max);
  return cut ? `${JSON.stringify(text)} (${[...s].length} chars)` : JSON.stringify(s);
};

/** Builds the approval preview for one pending op. */
export async function buildPreview(input: PreviewInput): Promise<ApprovalPreview> {
  const a = (input.args && typeof input.args === 'object' && !Array.isArray(input.args) ? input.args : {}) as Record<string, JsonValue>;
  let target: HelperTarget;
  try {
    target = await input.checkedTarget(input.addr);
  } catch (error) {
    return { text: `${input.op} on desktop:${input.addr} will be refused: ${describe(error)}` };
  }
  const where = `in ${quote(input.binding?.title ?? input.addr)} (desktop:${input.addr}, pid ${target.pid})`;
  let shot: Shot | undefined;
  let note = '';
  let warnings: string[] = [];
  try {
    shot = (await input.call('screenshot', { target, args: { max_width: input.maxWidth ?? DEFAULT_PREVIEW_MAX_WIDTH } })) as unknown as Shot;
    warnings = (shot.warnings ?? []).filter((w) => typeof w === 'string').slice(0, 8);
  } catch (error) {
    note = ` (no screenshot: ${describe(error)})`;
    warnings = [`no current screenshot: ${describe(error)}`];
  }
  const scale = shot?.scale ?? 1;
  const px = (v: number): number => Math.round(v * scale);
  let text: string;
  let mark: ApprovalPreview['mark'];
  switch (input.op) {
    case 'click': {
      const button = typeof a.button === 'string' ? a.button : 'left';
      text = `${button}-click at (${String(a.x)}, ${String(a.y)}) ${where}`;
      if (typeof a.x === 'number' && typeof a.y === 'number') mark = { x: px(a.x), y: px(a.y) };
      break;
    }
    case 'activate':
    case 'set-text':
    case 'type': {
      const path = typeof a.path === 'string' ? a.path : undefined;
      let el: ElementFacts | undefined;
      if (path) {
        try {
          el = (await input.call('element', { target, args: { path } })) as unknown as ElementFacts;
        } catch (error) {
          note += ` (element ${path}: ${describe(error)})`;
        }
      }
      const what = el ? `${el.role} ${quote(el.name)} (${el.path})` : path ? `element ${path}` : 'the focused element';
      const textArg = typeof a.text === 'string' ? a.text : '';
      const shown = a.sensitive === true ? `${[...textArg].length} characters (sensitive, hidden)` : quote(textArg);
      text =
        input.op === 'activate'
          ? `activate ${what} ${where}`
          : input.op === 'set-text'
            ? `set the text of ${what} to ${shown} ${where}`
            : `type ${a.sensitive === true ? shown : `${[...textArg].length} characters ${shown}`} into ${what} ${where}`;
      if (el?.bounds) mark = { x: px(el.bounds.x), y: px(el.bounds.y), width: px(el.bounds.width), height: px(el.bounds.height) };
      break;
    }
    case 'key':
      text = `press ${typeof a.chord === 'string' ? a.chord : '?'} ${where}`;
      break;
    default:
      text = `${input.op} ${where}`;
  }
  const preview: ApprovalPreview = { text: text + note };
  if (shot) preview.image_png = shot.png_base64;
  if (mark) preview.mark = mark;
  // The operator approves what the picture shows: a picture that may be wrong, or none, says so up front.
  if (warnings.length) preview.warnings = warnings;
  return preview;
}

function describe(error: unknown): string {
  if (error instanceof DriverError)
    return `${error.message}${error.evidence !== undefined && error.evidence !== '' ? ` (${typeof error.evidence === 'string' ? error.evidence : JSON.stringify(error.evidence)})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
