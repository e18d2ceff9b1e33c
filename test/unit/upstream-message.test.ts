/** The backend-message sanitizer, on the real recorded Cinder traceback and on typical leaks. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWellFormed } from '../../adapters/contract/input';
import { MAX_UPSTREAM_MESSAGE, sanitizeUpstreamMessage } from '../../adapters/http/upstream-message';
import { errorFromResponse as nomadError } from '../../adapters/nomad/errors';
import { errorFromResponse as openstackError } from '../../adapters/openstack/errors';

/** The os-attach 400 body exactly as the real Cinder 21.3.1 sent it (cinder-21/08-errors.md). */
function recordedTracebackBody(): string {
  const md = readFileSync(join(__dirname, '../fixtures/recorded/cinder-21/08-errors.md'), 'utf8');
  const section = md.split('\n### ').find((s) => s.startsWith('ERROR os-attach a 2nd instance'))!;
  return /```json\n(.*)\n```/.exec(section)![1]!;
}

describe('sanitizeUpstreamMessage', () => {
  it('should keep only the first line of the recorded Cinder traceback message', () => {
    const raw = JSON.parse(recordedTracebackBody()).badRequest.message as string;
    expect(raw).toContain('Traceback (most recent call last)');
    expect(sanitizeUpstreamMessage(raw)).toBe(
      'Invalid volume: volume is already attached and multiple attachments are not enabled',
    );
  });

  it.each([
    [
      'a Go dial error',
      'rpc error: code = Unavailable desc = dial tcp 10.0.3.7:4647: connect: connection refused',
      'rpc error: code = Unavailable desc = dial tcp [host]: connect: connection refused',
    ],
    [
      'a URL',
      'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.',
      'Unexpected API Error. Please report this at [url] and attach the Nova API log if possible.',
    ],
    [
      'host:port names',
      'no route to cinder-api:8776, nomad.service.consul:4646, localhost:80 or [fe80::1]:4646',
      'no route to [host], [host], [host] or [host]',
    ],
    ['a Cinder volume-service address', 'volume on real-cinder@fake#fake failed', 'volume on [host] failed'],
    ['server file paths', 'open /etc/nomad.d/tls/key.pem: no such file', 'open [path]: no such file'],
    [
      'a Go panic',
      'panic: runtime error\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d',
      'panic: runtime error',
    ],
  ])('should strip %s', (_what, raw, clean) => {
    expect(sanitizeUpstreamMessage(raw)).toBe(clean);
  });

  it('should keep what the caller needs: device paths, ids, times, multi-line validation lists', () => {
    const nomad =
      'unable to update volume: 2 errors occurred:\n\t* volume name cannot be updated\n\t* can not update mount options while volume is in use\n\n';
    expect(sanitizeUpstreamMessage(nomad)).toBe(
      'unable to update volume: 2 errors occurred:\n\t* volume name cannot be updated\n\t* can not update mount options while volume is in use',
    );
    const cinder =
      "Invalid volume: Volume f3731cb9-418a-4e30-9d3d-3fad4aaff94e status must be '{'status': 'available'}' to extend, currently in-use.";
    expect(sanitizeUpstreamMessage(cinder)).toBe(cinder);
    expect(sanitizeUpstreamMessage('device /dev/vdb is busy since 2026-11-22T02:14:42')).toBe(
      'device /dev/vdb is busy since 2026-11-22T02:14:42',
    );
  });

  it('should bound the length without splitting a surrogate pair, and drop control characters', () => {
    expect(sanitizeUpstreamMessage('x'.repeat(5000))).toHaveLength(MAX_UPSTREAM_MESSAGE);
    const cut = sanitizeUpstreamMessage(`${'x'.repeat(MAX_UPSTREAM_MESSAGE - 2)}💥💥`);
    expect(isWellFormed(cut)).toBe(true);
    expect(cut.endsWith('…')).toBe(true);
    expect(sanitizeUpstreamMessage('a\u0000b\u001bc\u0085d')).toBe('abcd');
  });
});

describe('adapters use it for message and backendMessage', () => {
  it('should send no traceback, path or host from the recorded Cinder 400, and call it CONFLICT', () => {
    const err = openstackError(400, recordedTracebackBody(), {
      backend: 'os',
      service: 'volume',
      action: 'attaching volume v',
    });
    const ext = err.toExtensions();
    expect(ext).toEqual({
      code: 'CONFLICT',
      retryable: false,
      backend: 'os',
      httpStatus: 400,
      backendMessage: 'Invalid volume: volume is already attached and multiple attachments are not enabled',
    });
    for (const text of [err.message, JSON.stringify(ext)])
      expect(text).not.toMatch(/Traceback|dist-packages|File "|line \d+/);
  });

  it('should map Cinder quota answers to QUOTA_EXCEEDED with the Retry-After Cinder gave, and a gRPC ResourceExhausted from Nomad too', () => {
    const body =
      '{"overLimit": {"code": 413, "message": "VolumeLimitExceeded: Maximum number of volumes allowed (10) exceeded for quota \'volumes\'.", "retryAfter": "0"}}';
    expect(
      openstackError(413, body, { backend: 'os', service: 'volume', action: 'creating a volume' }).toExtensions(),
    ).toMatchObject({ code: 'QUOTA_EXCEEDED', retryable: false, httpStatus: 413, retryAfterSeconds: 0 });
    const nomad = nomadError(500, 'rpc error: code = ResourceExhausted desc = volume limit exceeded for account', {
      backend: 'n',
      action: 'creating volume "x"',
      hadToken: true,
    });
    expect(nomad.toExtensions()).toMatchObject({ code: 'QUOTA_EXCEEDED', retryable: false });
  });

  it('should leave out backendMessage entirely when nothing useful is left', () => {
    const ext = openstackError(500, 'Traceback (most recent call last):\n  File "/x/y.py", line 1, in z\n', {
      backend: 'os',
      service: 'volume',
      action: 'x',
    }).toExtensions();
    expect(ext.backendMessage).toBeUndefined();
  });
});
