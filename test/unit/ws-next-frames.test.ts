/** The transport's own `next` frames are byte for byte what graphql-ws writes for the same message. */
import { MessageType } from 'graphql-ws';
import { NextFrames } from '../../server/ws/shared-bytes';
import { SerializedResult } from '../../subscriptions/live/types';

it.each(['1', 'a"b\\c', 'ünï-☃', '\u2028x', '9'.repeat(200)])(
  'writes id %j, type next, then the shared payload',
  (id) => {
    const payload = { data: { volumeChanged: { type: 'CLAIMED', cursor: 'c"1', note: 'é\n' } } };
    const result = new SerializedResult(JSON.stringify(payload));
    const frame = new NextFrames(id).frame(result);
    expect(frame.toString('utf8')).toBe(JSON.stringify({ id, type: MessageType.Next, payload }));
    // The same result written again (the next subscriber) gives the same bytes.
    expect(new NextFrames(id).frame(result).equals(frame)).toBe(true);
  },
);
