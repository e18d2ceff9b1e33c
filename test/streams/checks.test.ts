/**
 * What an HTTP stream shares with queries and graphql-ws: credentials from the request's headers
 * (as a query's), the hub's start checks, and trusted documents screened by the HTTP edge.
 */
import { createHash } from 'node:crypto';
import { TrustedDocuments } from '../../server/http/trusted-documents';
import { MGMT, startWsGateway, stopAll, SUB } from '../ws/helpers';
import { MULTIPART_ACCEPT, multipartParts, nextData, openStream, sseEvents, SSE_ACCEPT, typeOf } from './helpers';

afterEach(stopAll);

describe('checks on HTTP streams', () => {
  it("should take credentials from the request's headers: a refused token ends the start UNAUTHENTICATED, a malformed header is a 400", async () => {
    const gw = await startWsGateway();
    const refused = await openStream(gw.gateway.url, SUB, { headers: { 'X-Nomad-Token': 'garbage-token' } });
    await refused.ended;
    const [next, complete] = sseEvents(refused.text()).filter((e) => !e.comment);
    expect(JSON.parse(next!.data!).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(complete!.event).toBe('complete');
    // The per-backend header, as HTTP reads it.
    const perBackend = await openStream(gw.gateway.url, SUB, {
      headers: { 'X-Nomad-Token': '', 'X-Nomad-Token-east': MGMT },
    });
    expect(typeOf(JSON.parse(await nextData(perBackend)))).toBe('SUBSCRIBED');
    const bad = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: SSE_ACCEPT, 'X-Nomad-Token': 'a\tb' },
      body: JSON.stringify({ query: SUB }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('should serve only trusted documents when they are on: by documentId, and a free-form one not listed is refused as for a query', async () => {
    const hash = createHash('sha256').update(SUB).digest('hex');
    const gw = await startWsGateway({
      http: { trustedDocuments: { documents: TrustedDocuments.fromJson({ [hash]: SUB }) } },
    });
    const free = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: SSE_ACCEPT },
      body: JSON.stringify({ query: 'subscription { volumeChanged { type } }' }),
    });
    expect(free.status).toBe(400);
    expect((await free.json()).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const ctrl = new AbortController();
    const byId = await fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MULTIPART_ACCEPT, 'X-Nomad-Token': MGMT },
      body: JSON.stringify({ documentId: `sha256:${hash}` }),
      signal: ctrl.signal,
    });
    expect(byId.status).toBe(200);
    let text = '';
    const reader = byId.body!.getReader();
    while (!multipartParts(text).some((p) => typeOf(p.payload) === 'SUBSCRIBED'))
      text += new TextDecoder().decode((await reader.read()).value);
    ctrl.abort();
    await gw.waitOpen(0, 'the aborted stream to give its place back');
  });
});
