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
  dry-run <tenant> <openai|anthropic> <request.json> [--config FILE] [--version N]
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

function need(args: string[], n: number, what: string): string[] {
  if (args.length < n) throw new CliError(`missing ${what}\n\n${USAGE}`, 'usage');
  return args;
}

function readDocument(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  return /\.json$/i.test(file) ? JSON.parse(text) : text;
}

export async function runCommand(api: AdminClient, argv: string[], f: Flags): Promise<unknown> {
  const [group, verb, ...rest] = argv;
  const cmd = `${group ?? ''} ${verb ?? ''}`.trim();
  switch (group === 'dry-run' || group === 'expand' || group === 'shadow' ? group : cmd) {
    case 'tenant create': {
      const [id] = need(rest, 1, 'tenant id');
      return api.call('POST', '/v1/tenants', { id, name: f.name ?? id });
    }
    case 'tenant list':
      return api.call('GET', '/v1/tenants');
    case 'tenant disable':
      return api.call('DELETE', `/v1/tenants/${enc(need(rest, 1, 'tenant id')[0]!)}`);
    case 'key issue':
      return api.call('POST', `/v1/tenants/${enc(need(rest, 1, 'tenant id')[0]!)}/keys`, f.label ? { label: f.label } : {});
    case 'key revoke': {
      const [t, id] = need(rest, 2, 'tenant id and key id');
      return api.call('DELETE', `/v1/tenants/${enc(t!)}/keys/${enc(id!)}`);
    }
    case 'admin-key issue':
      return api.call('POST', '/v1/admin-keys', { role: need(rest, 1, 'role')[0], ...(f.label ? { label: f.label } : {}) });
    case 'config push': {
      const [t, file] = need(rest, 2, 'tenant id and file');
      return api.call('POST', `/v1/tenants/${enc(t!)}/configs`, { document: readDocument(file!), activate: f.activate === true });
    }
    case 'config activate': {
      const [t, v] = need(rest, 2, 'tenant id and version');
      return api.call('POST', `/v1/tenants/${enc(t!)}/configs/${enc(v!)}/activate`);
    }
    case 'config rollback': {
      const [t, v] = need(rest, 1, 'tenant id');
      return api.call('POST', `/v1/tenants/${enc(t!)}/configs/${v ?? (await previousVersion(api, t!))}/activate`);
    }
    case 'config diff': {
      const [t, a, b] = need(rest, 3, 'tenant id, from and to');
      return api.call('GET', `/v1/tenants/${enc(t!)}/configs/diff?from=${enc(a!)}&to=${enc(b!)}`);
    }
    case 'filter push': {
      const [t, name, file] = need(rest, 3, 'tenant id, set name and file');
      return api.call('PUT', `/v1/tenants/${enc(t!)}/filters/${enc(name!)}`, {
        yaml: readFileSync(file!, 'utf8'),
        activate: f.activate === true,
      });
    }
    case 'filter activate': {
      const [t, name, v] = need(rest, 3, 'tenant id, set name and version');
      return api.call('POST', `/v1/tenants/${enc(t!)}/filters/${enc(name!)}/${enc(v!)}/activate`);
    }
    case 'dry-run': {
      const [t, provider, file] = need([verb ?? '', ...rest].filter(Boolean), 3, 'tenant id, provider and request file');
      const body = { provider, body: JSON.parse(readFileSync(file!, 'utf8')) as unknown } as Record<string, unknown>;
      if (f.config) body.document = readDocument(f.config);
      if (f.version) body.version = Number(f.version);
      return api.call('POST', `/v1/tenants/${enc(t!)}/dry-run`, body);
    }
    case 'shadow':
      return api.call('GET', `/v1/tenants/${enc(need([verb ?? ''].filter(Boolean), 1, 'tenant id')[0]!)}/shadow`);
    case 'expand': {
      const [t, id] = need([verb ?? '', ...rest].filter(Boolean), 2, 'tenant id and hash');
      if (!f.reason) throw new CliError('expand needs --reason (it is recorded in the audit log)', 'usage');
      return api.call('POST', '/v1/ops/expand', { tenant: t, id, reason: f.reason });
    }
    case 'audit list': {
      const q = new URLSearchParams();
      if (f.tenant) q.set('tenant', f.tenant);
      if (f.action) q.set('action', f.action);
      if (f.limit) q.set('limit', f.limit);
      return api.call('GET', `/v1/audit${q.size ? `?${q}` : ''}`);
    }
    case 'audit verify':
      return api.call('GET', '/v1/audit/verify');
    default:
      throw new CliError(`unknown command "${cmd}"\n\n${USAGE}`, 'usage');
  }
}

/** The highest version below the active one. */
async function previousVersion(api: AdminClient, tenant: string): Promise<number> {
  const versions = await api.call<Array<{ version: number; active: boolean }>>('GET', `/v1/tenants/${enc(tenant)}/configs`);
  const active = versions.find((v) => v.active);
  const prev = versions.filter((v) => active && v.version < active.version).pop();
  if (!prev) throw new CliError(`tenant "${tenant}" has no version before the active one to roll back to`, 'usage');
  return prev.version;
}
