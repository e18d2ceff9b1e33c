/** Operation names as metric labels, without HTTP: who may add one, and the cap behind that rule. */
import { CredentialProof } from '../../domain/credential-proof';
import { MAX_OPERATION_LABELS, OperationLabels } from '../../server/operation-labels';

describe('OperationLabels', () => {
  it('should give a vouched name its own label and an unvouched one `other`, even a name already labelled', () => {
    const labels = new OperationLabels();
    expect(labels.label('ListVolumes', false)).toBe('other');
    expect(labels.label('ListVolumes', true)).toBe('ListVolumes');
    expect(labels.label('ListVolumes', false)).toBe('other');
  });

  it('should keep `anonymous` and `invalid` whoever sends them', () => {
    const labels = new OperationLabels();
    expect([
      labels.label(undefined, false),
      labels.label(null, true),
      labels.label('9lives', true),
      labels.label(`a${'b'.repeat(64)}`, true),
    ]).toEqual(['anonymous', 'anonymous', 'invalid', 'invalid']);
  });

  it(`should still stop at ${MAX_OPERATION_LABELS} vouched names (first come), then \`other\``, () => {
    const labels = new OperationLabels();
    for (let i = 0; i < MAX_OPERATION_LABELS; i++) expect(labels.label(`Op${i}`, true)).toBe(`Op${i}`);
    expect(labels.label('OneTooMany', true)).toBe('other');
    expect(labels.label('Op0', true)).toBe('Op0');
  });
});

describe('CredentialProof', () => {
  it.each([200, 202, 204, 404, 409])('should take %i as the credential accepted', (status) => {
    const proof = new CredentialProof();
    proof.answered(status);
    expect(proof.proven).toBe(true);
  });

  it.each([400, 401, 403, 405, 413, 429, 500, 502, 503, 504])(
    'should not take %i as the credential accepted',
    (status) => {
      const proof = new CredentialProof();
      proof.answered(status);
      expect(proof.proven).toBe(false);
    },
  );

  it('should stay proven once one answer accepted the credential', () => {
    const proof = new CredentialProof();
    for (const s of [403, 200, 401]) proof.answered(s);
    expect(proof.proven).toBe(true);
  });
});
