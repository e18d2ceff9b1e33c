/**
 * Keystone's identity data and token issuing: projects, users with role assignments,
 * application credentials, and tokens (with Keystone's implied roles: admin ⇒ member ⇒ reader).
 * Only the `Default` domain exists.
 */
import { nowMicros } from '../clock';
import { auditId, fernetLikeToken, hexId } from '../ids';
import { ROLES, type ApplicationCredential, type Project, type Role, type Token, type User } from '../model';
import { NotFoundError, type SimState } from '../state';

export const DEFAULT_DOMAIN = { id: 'default', name: 'Default' } as const;

/** Roles a token carries for direct assignments (keystone's default implied-role rules). */
export function effectiveRoles(direct: readonly Role[]): Role[] {
  const set = new Set<Role>(direct);
  if (set.has('admin')) set.add('member');
  if (set.has('member')) set.add('reader');
  return ROLES.filter((r) => set.has(r));
}

export interface ProjectSpec {
  name: string;
  /**
   * Keep it hexadecimal, as Keystone's are: Cinder's routes only accept `[0-9a-f-]+` project
   * segments (others get the HTML 404, cinder-21/00).
   * @default a random 32-hex id
   */
  id?: string;
}

export function addProject(state: SimState, spec: ProjectSpec): string {
  if (state.findProject(spec.name)?.name === spec.name) throw new Error(`project ${spec.name} already exists`);
  const p: Project = { id: spec.id ?? hexId(), name: spec.name, domainId: DEFAULT_DOMAIN.id };
  state.projects.set(p.id, p);
  return p.id;
}

export interface UserSpec {
  name: string;
  password: string;
  /** Role assignments by project name or id. */
  projects?: Record<string, Role[]>;
  /** Project (name or id) that password auth without a scope is scoped to (Keystone's default_project_id). @default none: such tokens are unscoped */
  defaultProject?: string;
  /** @default a random 32-hex id */
  id?: string;
}

export function addUser(state: SimState, spec: UserSpec): string {
  const roles = new Map<string, Role[]>();
  for (const [ref, rs] of Object.entries(spec.projects ?? {})) {
    for (const r of rs) if (!ROLES.includes(r)) throw new Error(`unknown role ${String(r)}`);
    roles.set(state.requireProject(ref).id, [...rs]);
  }
  const u: User = {
    id: spec.id ?? hexId(),
    name: spec.name,
    password: spec.password,
    domainId: DEFAULT_DOMAIN.id,
    defaultProjectId: spec.defaultProject === undefined ? null : state.requireProject(spec.defaultProject).id,
    roles,
  };
  state.users.set(u.id, u);
  return u.id;
}

export interface AppCredSpec {
  /** User name or id. */
  user: string;
  /** Project name or id (the user must have a role there). */
  project: string;
  name: string;
  secret: string;
  /** @default the user's direct roles on the project */
  roles?: Role[];
  /** @default a random 32-hex id */
  id?: string;
}

export function addApplicationCredential(state: SimState, spec: AppCredSpec): string {
  const user = state.requireUser(spec.user);
  const project = state.requireProject(spec.project);
  const direct = user.roles.get(project.id);
  if (!direct || direct.length === 0) throw new Error(`user ${user.name} has no role on project ${project.name}`);
  const ac: ApplicationCredential = {
    id: spec.id ?? hexId(),
    name: spec.name,
    secret: spec.secret,
    userId: user.id,
    projectId: project.id,
    roles: spec.roles ? [...spec.roles] : [...direct],
  };
  state.appCreds.set(ac.id, ac);
  return ac.id;
}

/** Stores a new token. `projectId` null = unscoped. */
export function mintToken(
  state: SimState,
  user: User,
  projectId: string | null,
  opts: { methods: string[]; roles?: Role[]; appCred?: ApplicationCredential; ttlMs?: number; id?: string },
): Token {
  // Stored exactly; rendered with whole seconds like Keystone's Fernet tokens.
  const issuedAt = nowMicros();
  const direct = projectId === null ? [] : (opts.roles ?? user.roles.get(projectId) ?? []);
  const token: Token = {
    id: opts.id ?? fernetLikeToken(),
    userId: user.id,
    projectId,
    roles: opts.appCred ? [...direct] : effectiveRoles(direct),
    methods: opts.methods,
    issuedAt,
    expiresAt: issuedAt + (opts.ttlMs ?? state.opts.tokenTtlMs) * 1000,
    auditId: auditId(),
    appCred: opts.appCred ? { id: opts.appCred.id, name: opts.appCred.name } : null,
    revoked: false,
  };
  state.tokens.set(token.id, token);
  return token;
}

/**
 * `issueToken({user, project})`: a valid password-method token without an HTTP round trip.
 * `id` fixes the token's value (demo mode prints a stable one); Keystone itself never lets a
 * client choose, so this exists only on the control side.
 */
export function issueToken(
  state: SimState,
  spec: { user: string; project?: string; ttlMs?: number; id?: string },
): string {
  const user = state.requireUser(spec.user);
  let projectId: string | null = null;
  if (spec.project !== undefined) {
    projectId = state.requireProject(spec.project).id;
    if (!(user.roles.get(projectId)?.length ?? 0))
      throw new NotFoundError(`user ${user.name} has no role on project ${spec.project}`);
  }
  if (spec.id !== undefined && (spec.id.length < 16 || state.tokens.has(spec.id)))
    throw new Error('a fixed token id must be unique and at least 16 characters');
  return mintToken(state, user, projectId, {
    methods: ['password'],
    ...(spec.ttlMs !== undefined ? { ttlMs: spec.ttlMs } : {}),
    ...(spec.id !== undefined ? { id: spec.id } : {}),
  }).id;
}
