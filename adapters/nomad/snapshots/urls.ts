/** Nomad's snapshot path: one for list, create and delete (ids travel as query values). */
export const snapshotsURL = (): string => '/v1/volumes/snapshot';
