// The operations an operator reaches for first, each one call (or two) of the admin API.
import { readFileSync } from 'node:fs';
import { AdminClient, CliError } from './admin-client';

export const USAGE = `usage: context-guru-admin <command> [args]   (ADMIN_URL, ADMIN_TOKEN from the environment)

  tenant create <id> [--name NAME]             create a tenant
  tenant list                                  list tenants
  tenant disable <id>                          disable a tenant (its keys stop working)
  key issue <tenant> [--label L]               issue a tenant key (shown once)
  key revoke <tenant> <key-id>                 revoke a tenant key
  admin-key issue <admin|operator|viewer> [--label L]
  config push <tenant> <file> [--activate]     push a pipeline document (YAML or JSON)
  config activate <tenant> <version>           activate a version
  config rollback <tenant> [version]           activate an earlier version (default: the one before the active)
  config diff <tenant> <from> <to>             what changed between two versions
  filter push <tenant> <name> <file> [--activate]
  filter activate <tenant> <name> <version>
  dry-run <tenant> <openai|anthropic|responses|gemini> <request.json> [--config FILE] [--version N]
  shadow <tenant>                              the candidate version vs the active one, summed over replicas
  expand <tenant> <hash> --reason TEXT         an original by hash (operator; audited)
  audit list [--tenant T] [--action A] [--limit N]
  audit verify                                 check the audit hash chain`;

export interface Flags {
  name?: string;
  label?: string;
  activate?: boolean;
  config?: string;
  version?: string;
  reason?: string;
  tenant?: string;
  action?: string;
  limit?: string;
}

const enc = encodeURIComponent;

/** The positional arguments a command needs, one name each for the usage error when some are missing. */
function need<const W extends readonly string[]>(args: readonly string[], ...names: W): { -readonly [K in keyof W]: string } {
  if (args.length < names.length) throw new CliError(`missing ${names.slice(args.length).join(', ')}\n\n${USAGE}`, 'usage');
  return args.slice(0, names.length) as { -readonly [K in keyof W]: string };
}

function readDocument(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  return /\.json$/i.test(file) ? JSON.parse(text) : text;
}

type Command = (api: AdminClient, args: string[], f: Flags) => Promise<unknown>;

/** Keyed by "group verb"; `dry-run`, `shadow` and `expand` take no verb, so their args start right after the group. */
const COMMANDS: Record<string, Command> = {
  'tenant create': (api, args, f) => {
    const [id] = need(args, 'tenant id');
    return api.call('POST', '/v1/tenants', { id, name: f.name ?? id });
  },
  'tenant list': (api) => api.call('GET', '/v1/tenants'),
  'tenant disable': (api, args) => {
    const [t] = need(args, 'tenant id');
    return api.call('DELETE', `/v1/tenants/${enc(t)}`);
  },
  'key issue': (api, args, f) => {
    const [t] = need(args, 'tenant id');
    return api.call('POST', `/v1/tenants/${enc(t)}/keys`, f.label ? { label: f.label } : {});
  },
  'key revoke': (api, args) => {
    const [t, id] = need(args, 'tenant id', 'key id');
    return api.call('DELETE', `/v1/tenants/${enc(t)}/keys/${enc(id)}`);
  },
  'admin-key issue': (api, args, f) => {
    const [role] = need(args, 'role');
    return api.call('POST', '/v1/admin-keys', { role, ...(f.label ? { label: f.label } : {}) });
  },
  'config push': (api, args, f) => {
    const [t, file] = need(args, 'tenant id', 'file');
    return api.call('POST', `/v1/tenants/${enc(t)}/configs`, { document: readDocument(file), activate: f.activate === true });
  },
  'config activate': (api, args) => {
    const [t, v] = need(args, 'tenant id', 'version');
    return api.call('POST', `/v1/tenants/${enc(t)}/configs/${enc(v)}/activate`);
  },
  'config rollback': async (api, args) => {
    const [t] = need(args, 'tenant id');
    const v = args[1] ?? String(await previousVersion(api, t));
    return api.call('POST', `/v1/tenants/${enc(t)}/configs/${enc(v)}/activate`);
  },
  'config diff': (api, args) => {
    const [t, a, b] = need(args, 'tenant id', 'from', 'to');
    return api.call('GET', `/v1/tenants/${enc(t)}/configs/diff?from=${enc(a)}&to=${enc(b)}`);
  },
  'filter push': (api, args, f) => {
    const [t, name, file] = need(args, 'tenant id', 'set name', 'file');
    return api.call('PUT', `/v1/tenants/${enc(t)}/filters/${enc(name)}`, {
      yaml: readFileSync(file, 'utf8'),
      activate: f.activate === true,
    });
  },
  'filter activate': (api, args) => {
    const [t, name, v] = need(args, 'tenant id', 'set name', 'version');
    return api.call('POST', `/v1/tenants/${enc(t)}/filters/${enc(name)}/${enc(v)}/activate`);
  },
  'dry-run': (api, args, f) => {
    const [t, provider, file] = need(args, 'tenant id', 'provider', 'request file');
    const body: Record<string, unknown> = { provider, body: JSON.parse(readFileSync(file, 'utf8')) as unknown };
    if (f.config) body.document = readDocument(f.config);
    if (f.version) body.version = Number(f.version);
    return api.call('POST', `/v1/tenants/${enc(t)}/dry-run`, body);
  },
  shadow: (api, args) => {
    const [t] = need(args, 'tenant id');
    return api.call('GET', `/v1/tenants/${enc(t)}/shadow`);
  },
  expand: (api, args, f) => {
    const [t, id] = need(args, 'tenant id', 'hash');
    if (!f.reason) throw new CliError('expand needs --reason (it is recorded in the audit log)', 'usage');
    return api.call('POST', '/v1/ops/expand', { tenant: t, id, reason: f.reason });
  },
  'audit list': (api, _args, f) => {
    const q = new URLSearchParams();
    if (f.tenant) q.set('tenant', f.tenant);
    if (f.action) q.set('action', f.action);
    if (f.limit) q.set('limit', f.limit);
    return api.call('GET', `/v1/audit${q.size ? `?${q.toString()}` : ''}`);
  },
  'audit verify': (api) => api.call('GET', '/v1/audit/verify'),
};

const VERBLESS = new Set(['dry-run', 'expand', 'shadow']);

export async function runCommand(api: AdminClient, argv: string[], f: Flags): Promise<unknown> {
  const [group = '', verb = '', ...rest] = argv;
  const verbless = VERBLESS.has(group);
  const name = verbless ? group : `${group} ${verb}`.trim();
  const command = COMMANDS[name];
  if (!command) throw new CliError(`unknown command "${name}"\n\n${USAGE}`, 'usage');
  return command(api, verbless ? argv.slice(1) : rest, f);
}

/** The highest version below the active one. */
async function previousVersion(api: AdminClient, tenant: string): Promise<number> {
  const versions = await api.call<Array<{ version: number; active: boolean }>>('GET', `/v1/tenants/${enc(tenant)}/configs`);
  const active = versions.find((v) => v.active);
  const prev = versions.filter((v) => active && v.version < active.version).pop();
  if (!prev) throw new CliError(`tenant "${tenant}" has no version before the active one to roll back to`, 'usage');
  return prev.version;
}
