/** Nomad's cluster paths the adapter calls: the leader probe and the token self-read. */
export const leaderURL = (): string => '/v1/status/leader';
export const aclTokenSelfURL = (): string => '/v1/acl/token/self';
