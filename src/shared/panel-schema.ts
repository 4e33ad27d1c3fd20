/**
 * The panel protocol as one JSON Schema document (Draft 2020-12), generated from the declarations
 * the hub itself checks frames against: the frames (`panel-ws.ts`), every method's params and
 * result and every event's payload (`panel-channels.ts`), and the sign-in bodies. Published as
 * docs/panel-protocol.schema.json for client authors; a test fails when that file is stale.
 */
import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import { PanelErrorWire } from './panel-api';
import { PANEL_CALLS, PANEL_EVENTS } from './panel-channels';
import { ClientFrame, CLOSE_UNAUTHORIZED, PANEL_WS_PROTOCOL, ServerFrame } from './panel-ws';
import { Closed } from './schema';

/** `POST /panel/session`: the one-time code from a panel link's fragment. */
export const SignInRequest = Closed({ code: Type.String({ minLength: 1, maxLength: 64 }) });
/** Its answer (with a `Set-Cookie` naming the session): the key the first frame proves. */
export const SignInResponse = Type.Object({ key: Type.String({ minLength: 1 }) });
/** `POST /panel/code` with `Authorization: Operator <operator.key>`: a fresh one-time link. */
export const PanelLinkResponse = Type.Object({ panel_url: Type.String({ minLength: 1 }) });

/** A declaration as plain JSON (TypeBox's symbol-keyed markers dropped). */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/**
 * The document: `$defs` holds the frames (`ClientFrame`, `ServerFrame`, `PanelError`), the sign-in
 * bodies (`http.*`), each method's `call.<method>.params` and `call.<method>.result`, and each
 * event's `event.<name>`. The document itself validates any frame, in either direction.
 */
export function panelProtocolSchema(): Record<string, unknown> {
  const defs: Record<string, unknown> = {
    ClientFrame: plain(ClientFrame),
    ServerFrame: plain(ServerFrame),
    PanelError: plain(PanelErrorWire),
    'http.panelSession.request': plain(SignInRequest),
    'http.panelSession.response': plain(SignInResponse),
    'http.panelCode.response': plain(PanelLinkResponse),
  };
  for (const [method, { request, response }] of Object.entries(PANEL_CALLS)) {
    defs[`call.${method}.params`] = plain(request);
    defs[`call.${method}.result`] = plain(response);
  }
  for (const [event, payload] of Object.entries(PANEL_EVENTS)) defs[`event.${event}`] = plain(payload);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `Uplink panel protocol (WebSocket subprotocol ${PANEL_WS_PROTOCOL})`,
    description:
      `Frames of the panel WebSocket at /panel/ws, the params and result of every method and the payload of every event. ` +
      `A missing or expired sign-in closes the socket with code ${CLOSE_UNAUTHORIZED}. Described in docs/panel-protocol.md; ` +
      'generated from src/shared (panel-ws.ts, panel-channels.ts, panel-schema.ts): do not edit by hand.',
    anyOf: [{ $ref: '#/$defs/ClientFrame' }, { $ref: '#/$defs/ServerFrame' }],
    $defs: defs,
  };
}
