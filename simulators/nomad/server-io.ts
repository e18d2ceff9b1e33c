/**
 * Writing responses the way Nomad's Go server does (command/agent/http.go `wrap()` behind
 * gorilla/handlers `CompressHandler`, on net/http):
 *
 * - `Vary: Accept-Encoding` on every response;
 * - when the request's Accept-Encoding lists the exact token `gzip` or `deflate` (first one
 *   wins) and there is no `Upgrade` header, the body is compressed and Content-Length dropped.
 *   A handler that writes nothing still produces the (empty) compressed stream, and net/http
 *   then sniffs its bytes for a Content-Type (`application/x-gzip` / `application/octet-stream`);
 * - otherwise a body-less reply has no Content-Type and `Content-Length: 0`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import type { QueryMeta } from './http';

/** A response body sink (possibly compressing). */
export interface BodyWriter {
  write(chunk: string | Buffer): void;
  /** Pushes compressed bytes out (event streams). */
  flush(): void;
  end(): void;
}

/** The content-coding gorilla's CompressHandler would pick, or null. */
export function negotiateEncoding(req: IncomingMessage, enabled: boolean): 'gzip' | 'deflate' | null {
  if (!enabled || req.headers.upgrade) return null;
  const raw = req.headers['accept-encoding'];
  const header = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  for (const enc of header.split(',')) {
    const e = enc.trim();
    if (e === 'gzip' || e === 'deflate') return e;
  }
  return null;
}

/** Sets the X-Nomad-* meta headers (`setMeta`). */
export function setMetaHeaders(res: ServerResponse, meta: QueryMeta): void {
  res.setHeader('X-Nomad-Index', String(meta.Index));
  res.setHeader('X-Nomad-LastContact', String(meta.LastContact));
  res.setHeader('X-Nomad-KnownLeader', meta.KnownLeader ? 'true' : 'false');
  if (meta.NextToken !== '') res.setHeader('X-Nomad-NextToken', meta.NextToken);
}

/**
 * Sends a complete response. `body` null means the handler wrote nothing. Headers already set
 * on `res` are kept.
 */
export function sendComplete(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string | null,
  body: string | null,
  compression: boolean,
): void {
  if (compression) res.setHeader('Vary', 'Accept-Encoding');
  const enc = negotiateEncoding(req, compression);
  if (contentType) res.setHeader('Content-Type', contentType);
  res.statusCode = status;
  const data = body === null ? Buffer.alloc(0) : Buffer.from(body, 'utf8');
  if (enc === null) {
    res.end(req.method === 'HEAD' ? undefined : data);
    return;
  }
  const compressed = enc === 'gzip' ? zlib.gzipSync(data) : zlib.deflateRawSync(data);
  res.setHeader('Content-Encoding', enc);
  if (!contentType) res.setHeader('Content-Type', enc === 'gzip' ? 'application/x-gzip' : 'application/octet-stream');
  res.end(req.method === 'HEAD' ? undefined : compressed);
}

/** Starts a streamed 200 response (event stream) and returns its body writer. */
export function openStream(
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
  compression: boolean,
): BodyWriter {
  if (compression) res.setHeader('Vary', 'Accept-Encoding');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  const enc = negotiateEncoding(req, compression);
  res.statusCode = 200;
  if (enc === null) {
    res.flushHeaders();
    return {
      write: (c) => {
        if (!res.writableEnded) res.write(c);
      },
      flush: () => undefined,
      end: () => {
        if (!res.writableEnded) res.end();
      },
    };
  }
  res.setHeader('Content-Encoding', enc);
  res.flushHeaders();
  const z = enc === 'gzip' ? zlib.createGzip() : zlib.createDeflateRaw();
  z.pipe(res);
  let ended = false;
  return {
    write: (c) => {
      if (!ended) z.write(c);
    },
    flush: () => {
      if (!ended) z.flush(zlib.constants.Z_SYNC_FLUSH);
    },
    end: () => {
      if (ended) return;
      ended = true;
      z.end();
    },
  };
}
