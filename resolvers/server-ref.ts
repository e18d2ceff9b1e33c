/** What an `OpenStackServer` resolves from: its address; name and state come from a loader. */
export interface ServerRef {
  kind: 'OpenStackServer';
  backend: string;
  /** Project the server belongs to (the caller's). */
  scope: string;
  id: string;
}
