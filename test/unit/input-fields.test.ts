/**
 * Input errors from adapters name fields relative to the adapter's input; the resolver layer
 * places them under the argument, keeping the error's class, code and extensions. Errors that
 * already name an argument path pass unchanged (never placed twice).
 */
import { BadUserInputError, inputField, NotFoundError } from '../../adapters/contract/errors';
import { headerText, safeText } from '../../adapters/contract/input';
import { keyValueList } from '../../adapters/contract/input-parts';
import { NovaAttachmentError } from '../../adapters/openstack/errors';
import { placeInputFields, underArgument } from '../../resolvers/input-fields';

const thrown = (f: () => unknown): any => {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('not thrown');
};

describe('input fields', () => {
  const input = underArgument('input');

  it('should name a relative field until placed, then the argument path, in the argument and the message', () => {
    const err = BadUserInputError.atField(
      'maxSizeBytes',
      (name) => `${name('maxSizeBytes')} is below ${name('sizeBytes')}`,
    );
    expect(err).toMatchObject({
      field: 'maxSizeBytes',
      argument: 'maxSizeBytes',
      message: 'maxSizeBytes is below sizeBytes',
    });
    const placed = err.placed(input);
    expect(placed).toBeInstanceOf(BadUserInputError);
    expect(placed).toMatchObject({
      field: undefined,
      argument: 'input.maxSizeBytes',
      message: 'input.maxSizeBytes is below input.sizeBytes',
    });
    expect(placed.toExtensions()).toEqual({ code: 'BAD_USER_INPUT', retryable: false, argument: 'input.maxSizeBytes' });
    expect(placed.placed(input)).toBe(placed);
    expect(BadUserInputError.atField('', () => 'nothing to change').placed(input).argument).toBe('input');
  });

  it('should leave errors that name an argument path as they are', () => {
    const absolute = thrown(() => safeText('a\u0001', 'input.name'));
    expect(absolute).toMatchObject({ argument: 'input.name', message: 'input.name contains control characters' });
    expect(absolute.placed(input)).toBe(absolute);
  });

  it('should let the shared rules name relative fields, nested ones included', () => {
    const err = thrown(() =>
      keyValueList(
        [
          { key: 'k', value: 'v' },
          { key: 'k2', value: 'x'.repeat(2000) },
        ],
        inputField('nomad.parameters'),
      ),
    );
    expect(err.placed(input)).toMatchObject({
      argument: 'input.nomad.parameters[1].value',
      message: 'input.nomad.parameters[1].value is longer than 1024 characters',
    });
    expect(thrown(() => headerText('a\nb', inputField('secrets'))).placed(input).message).toMatch(
      /^input\.secrets: character 2 is not allowed in an HTTP header/,
    );
  });

  it('should keep the class and the extensions of what it places', () => {
    const nova = new NovaAttachmentError(inputField('hostAttachmentId'), 'srv-1', 'detachVolume').placed(input);
    expect(nova).toBeInstanceOf(NovaAttachmentError);
    expect(nova.toExtensions()).toEqual({
      code: 'BAD_USER_INPUT',
      retryable: false,
      argument: 'input.hostAttachmentId',
      serverId: 'srv-1',
      useMutation: 'detachVolume',
    });
    expect(nova.message).toMatch(/^input\.hostAttachmentId names the attachment of a Nova server \(srv-1\)/);
    const gone = new NotFoundError('', { backend: 'os' })
      .naming((name) => `${name('attachmentId')}: no such attachment`)
      .placed(input);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toMatchObject({ message: 'input.attachmentId: no such attachment', backend: 'os', code: 'NOT_FOUND' });
  });

  it('should place mutations’ fields under input and leave queries’ arguments as they are', async () => {
    const fail = (field: string) => () =>
      Promise.reject(BadUserInputError.atField(field, (name) => `${name(field)} is wrong`));
    const r = placeInputFields({
      Query: { volumes: fail('filter.plugin') },
      Mutation: { deleteVolume: fail('cascade') },
    }) as any;
    await expect(r.Mutation.deleteVolume()).rejects.toMatchObject({
      argument: 'input.cascade',
      message: 'input.cascade is wrong',
    });
    await expect(r.Query.volumes()).rejects.toMatchObject({
      argument: 'filter.plugin',
      message: 'filter.plugin is wrong',
      field: undefined,
    });
  });
});
