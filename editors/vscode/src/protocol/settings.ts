// Settings: from the editor's "cline.*" configuration to the daemon's
// initializationOptions, which workspace/didChangeConfiguration carries
// again whenever they change. The whole object is sent every time, and a
// setting the user cleared is sent as null: a field left out would keep
// the daemon's previous value.

import { isMode } from './methods';

export type ApprovalCategory = 'read' | 'edit' | 'execute' | 'fetch' | 'mcp';
// 'sandbox' is for execute only: commands run confined without asking.
export type ApprovalPolicy = 'allow' | 'ask' | 'deny' | 'sandbox';

const categories: ApprovalCategory[] = ['read', 'edit', 'execute', 'fetch', 'mcp'];
const policies: ApprovalPolicy[] = ['allow', 'ask', 'deny'];

/** ExtensionSettings mirrors the "cline.*" settings in package.json. */
export interface ExtensionSettings {
  path: string;
  provider: string;
  model: string;
  baseUrl: string;
  apiKeyEnv: string;
  transcript: string;
  mode: string;
  approvals: Partial<Record<ApprovalCategory, ApprovalPolicy>>;
}

/** InitializationOptions is the part of the daemon's settings the client sets. */
export interface InitializationOptions {
  provider?: { name?: string | null; model?: string | null; baseUrl?: string | null; apiKeyEnv?: string | null; transcript?: string | null; [extra: string]: unknown };
  mode?: string | null;
  approvals?: Partial<Record<ApprovalCategory, ApprovalPolicy>> | null;
  [extra: string]: unknown;
}

/**
 * readSettings reads the settings through get, which looks up a key under
 * "cline" (VS Code's WorkspaceConfiguration.get fits). Missing or mistyped
 * values fall back to defaults.
 */
export function readSettings(get: (key: string) => unknown): ExtensionSettings {
  const str = (key: string): string => {
    const v = get(key);
    return typeof v === 'string' ? v.trim() : '';
  };
  const approvals: ExtensionSettings['approvals'] = {};
  const raw = get('approvals');
  if (raw && typeof raw === 'object') {
    for (const c of categories) {
      const v = (raw as Record<string, unknown>)[c];
      if (typeof v === 'string' && ((policies as string[]).includes(v) || (c === 'execute' && v === 'sandbox'))) {
        approvals[c] = v as ApprovalPolicy;
      }
    }
  }
  return {
    path: str('path') || 'cline-ls',
    provider: str('provider'),
    model: str('model'),
    baseUrl: str('baseUrl'),
    apiKeyEnv: str('apiKeyEnv'),
    transcript: str('transcript'),
    mode: str('mode'),
    approvals,
  };
}

/**
 * initializationOptions turns settings into the daemon's shape. An unset
 * field is left out, so that the daemon's own fallbacks (CLINE_LS_*
 * variables, config file, API key variables) apply; an empty model means
 * the provider's default. An unknown mode is left out rather than sent,
 * since the daemon would refuse the whole object. extra is merged in last
 * (tests use it for the state folder).
 */
export function initializationOptions(s: ExtensionSettings, extra: InitializationOptions = {}): InitializationOptions {
  return withExtra(settingsObject(s, undefined), extra);
}

/**
 * didChangeConfigurationParams is the notification's params for settings
 * s: as initializationOptions, but an unset field is null, which clears
 * the daemon's earlier value.
 */
export function didChangeConfigurationParams(s: ExtensionSettings, extra?: InitializationOptions): { settings: InitializationOptions } {
  return { settings: withExtra(settingsObject(s, null), extra ?? {}) };
}

/** settingsObject builds the daemon's object, unset fields as unset. */
function settingsObject(s: ExtensionSettings, unset: null | undefined): InitializationOptions {
  const out: InitializationOptions = {};
  const provider: NonNullable<InitializationOptions['provider']> = {};
  const fields: Array<[keyof typeof provider, string]> = [
    ['name', s.provider],
    ['model', s.model],
    ['baseUrl', s.baseUrl],
    ['apiKeyEnv', s.apiKeyEnv],
    ['transcript', s.transcript],
  ];
  for (const [k, v] of fields) {
    if (v) provider[k] = v;
    else if (unset === null) provider[k] = null;
  }
  if (Object.keys(provider).length > 0) out.provider = provider;
  if (isMode(s.mode)) out.mode = s.mode;
  else if (unset === null) out.mode = null;
  if (Object.keys(s.approvals).length > 0) out.approvals = { ...s.approvals };
  else if (unset === null) out.approvals = null;
  return out;
}

function withExtra(out: InitializationOptions, extra: InitializationOptions): InitializationOptions {
  const { provider: extraProvider, ...rest } = extra;
  Object.assign(out, rest);
  if (extraProvider) out.provider = { ...out.provider, ...extraProvider };
  return out;
}

/** restartNeeded says whether a change from a to b needs a new daemon process. */
export function restartNeeded(a: ExtensionSettings, b: ExtensionSettings): boolean {
  return a.path !== b.path;
}
