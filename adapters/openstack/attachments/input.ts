/**
 * OpenStack's own rules on an attach's target, checked before any call (the domain asks them
 * before it claims an idempotency key): Nova's device tag. Errors name fields relative to the
 * attach input (`target.server.tag`); the resolver layer places them under the argument.
 */
import type { AttachTarget, OwnAttachInput } from '../../contract/call-inputs';
import { BadUserInputError, inputField } from '../../contract/errors';
import { safeText } from '../../contract/input';

const TAG = 'target.server.tag';

/** Nova's device tag rule: 1-60 characters without `/` or `,` (the compute API's `tag` schema). */
function checkTag(tag: string): void {
  if (tag.length === 0 || tag.length > 60 || /[/,]/.test(tag))
    throw BadUserInputError.atField(TAG, (name) => `${name(TAG)} must be 1-60 characters without "/" or ","`);
  safeText(tag, inputField(TAG), 60);
}

function checkTarget(target: AttachTarget): void {
  if (target.kind === 'server' && target.tag !== undefined) checkTag(target.tag);
}

export const ATTACH_INPUT: OwnAttachInput = { check: checkTarget };
