/**
 * A socket's caller: the credentials of the WebSocket upgrade request's headers and of the
 * `connection_init` payload, under the same names as HTTP (each kind's `<header>` and
 * `<header>-<backend>`; payload keys in any case), read by server/credentials.ts as if they were
 * headers. Routers put a caller's headers on the upgrade; browsers can only use the payload.
 * Both may be sent: the upgrade's header wins, per name, and the payload may repeat it only with
 * the same value (a different one is refused: two callers' tokens on one socket is a router bug,
 * not something to pick from). Other keys are ignored (browser IDEs send all their headers). A
 * bad payload is a BadUserInputError; the socket layer closes with 4403 and its message as the reason.
 */
import type { CallerCredential } from '../../adapters/contract/call-options';
import { MessageType } from 'graphql-ws';
import { BadUserInputError } from '../../adapters/contract/errors';
import { credentialsFromHeaders, isCredentialHeader } from '../credentials';
import type { PlainHeaders } from '../http/caller-identity';
import type { BackendRegistry } from '../../domain/registry';

const INIT = MessageType.ConnectionInit;

/** Who is on a socket, once `connection_init` was accepted. */
export interface SocketCaller {
  /** Credential per backend id, as HTTP would have them from the same headers. */
  credentials: ReadonlyMap<string, CallerCredential>;
}

/**
 * @param payload the payload as graphql-ws parsed it (an object, or undefined when none was sent)
 * @throws BadUserInputError naming the key that is wrong (never its value)
 */
export function readConnectionInit(
  payload: Readonly<Record<string, unknown>> | undefined,
  o: {
    registry: BackendRegistry;
    maxBytes: number;
    /** The upgrade request's credential headers (server/credentials.ts `pickCredentialHeaders`). @default none */
    upgrade?: Readonly<Record<string, string>>;
  },
): SocketCaller {
  const upgrade = o.upgrade ?? {};
  const headers: PlainHeaders = { ...upgrade };
  const seen = new Set<string>();
  if (payload !== undefined) {
    // Bounded like the request head of an HTTP request (the frame itself is bounded by maxPayload).
    if (Buffer.byteLength(JSON.stringify(payload)) > o.maxBytes)
      throw new BadUserInputError(`${INIT} payload is over ${o.maxBytes} bytes (WS_MAX_INIT_PAYLOAD_BYTES)`);
    for (const [k, v] of Object.entries(payload)) {
      const name = k.toLowerCase();
      if (!isCredentialHeader(name)) continue;
      if (typeof v !== 'string')
        throw new BadUserInputError(`${INIT}: ${k.slice(0, 60)} must be a string`, k.slice(0, 60));
      if (seen.has(name))
        throw new BadUserInputError(
          `${INIT}: ${k.slice(0, 60)} is given twice (names are case-insensitive)`,
          k.slice(0, 60),
        );
      seen.add(name);
      const fromUpgrade = upgrade[name];
      if (fromUpgrade === undefined) headers[name] = v;
      // Compared as read (trimmed; empty is not sent). Neither value is ever named.
      else if (v.trim() !== '' && v.trim() !== fromUpgrade)
        throw new BadUserInputError(
          `${INIT}: ${k.slice(0, 60)} differs from the upgrade request's header`,
          k.slice(0, 60),
        );
    }
  }
  // The per-credential quota's key is made by the hub once backends have said which are valid.
  return { credentials: credentialsFromHeaders(headers, o.registry) };
}
