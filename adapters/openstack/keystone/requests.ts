/**
 * One function per Keystone operation the gateway uses. Each builds the URL, headers and body and
 * sends through the client's `send` (transport, deadline, records); mapping is in `results.ts`.
 */
import type { HttpResponse } from '../../http/transport';
import { tokensURL } from './urls';

/** The gateway's own OpenStack credential. Never used for callers' requests. */
export type ServiceAuth =
  | {
      method: 'password';
      username: string;
      password: string;
      /** @default 'Default' */
      userDomainName?: string;
      projectName: string;
      /** @default 'Default' */
      projectDomainName?: string;
    }
  | { method: 'applicationCredential'; id: string; secret: string };

/** Sends one Keystone request (the client supplies transport, deadline and records). */
export type KeystoneSend = (req: {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  endpoint: string;
}) => Promise<HttpResponse>;

/**
 * Validates a caller token: the token as both `X-Auth-Token` and `X-Subject-Token`, which
 * Keystone allows for the token's own subject. 200 with the token body; 401/404 when invalid.
 */
export function validateToken(send: KeystoneSend, authUrl: string, token: string): Promise<HttpResponse> {
  return send({
    method: 'GET',
    url: authUrl + tokensURL(),
    headers: { accept: 'application/json', 'x-auth-token': token, 'x-subject-token': token },
    endpoint: 'GET /v3/auth/tokens',
  });
}

/** The `auth` body of a token request for the gateway's own credential. */
export function issueTokenBody(auth: ServiceAuth): unknown {
  if (auth.method === 'applicationCredential') {
    return {
      auth: {
        identity: { methods: ['application_credential'], application_credential: { id: auth.id, secret: auth.secret } },
      },
    };
  }
  return {
    auth: {
      identity: {
        methods: ['password'],
        password: {
          user: { name: auth.username, domain: { name: auth.userDomainName ?? 'Default' }, password: auth.password },
        },
      },
      scope: { project: { name: auth.projectName, domain: { name: auth.projectDomainName ?? 'Default' } } },
    },
  };
}

/** Issues a project-scoped token for the gateway's own credential: 201 with `X-Subject-Token`. */
export function issueToken(send: KeystoneSend, authUrl: string, auth: ServiceAuth): Promise<HttpResponse> {
  return send({
    method: 'POST',
    url: authUrl + tokensURL(),
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(issueTokenBody(auth)),
    endpoint: 'POST /v3/auth/tokens',
  });
}
