// Settings: from the editor's "cline.*" configuration to the daemon's
// initializationOptions, which workspace/didChangeConfiguration carries
// again whenever they change (PROTOCOL.md §2). The daemon replaces its
// settings with each such notification, so the whole object is sent every
// time.

import { isMode } from './methods';

export type ApprovalCategory = 'read' | 'edit' | 'execute' | 'fetch' | 'mcp';
export type ApprovalPolicy = 'allow' | 'ask' | 'deny';

const categories: ApprovalCategory[] = ['read', 'edit', 'execute', 'fetch', 'mcp'];
const policies: ApprovalPolicy[] = ['allow', 'ask', 'deny'];

/** ExtensionSettings mirrors the "cline.*" settings in package.json. */
export interface ExtensionSettings {
  path: string;
  provider: string;
  model: string;
  baseUrl: string;
  apiKeyEnv: string;
  mode: string;
  approvals: Partial<Record<ApprovalCategory, ApprovalPolicy>>;
}

/** InitializationOptions is the part of the daemon's settings the client sets. */
export interface InitializationOptions {
  provider?: { name?: string; model?: string; baseUrl?: string; apiKeyEnv?: string; [extra: string]: unknown };
  mode?: string;
  approvals?: Partial<Record<ApprovalCategory, ApprovalPolicy>>;
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
      if (typeof v === 'string' && (policies as string[]).includes(v)) {
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
    mode: str('mode'),
    approvals,
  };
}

/**
 * initializationOptions turns settings into the daemon's shape, leaving out
 * what is unset so that the daemon's own fallbacks (CLINE_LS_* variables,
 * config file, API key variables) apply. An unknown mode is left out rather
 * than sent, since the daemon would refuse the whole object. extra is merged
 * in last (tests use it for the replay provider and the state folder).
 */
export function initializationOptions(s: ExtensionSettings, extra: InitializationOptions = {}): InitializationOptions {
  const out: InitializationOptions = {};
  const provider: NonNullable<InitializationOptions['provider']> = {};
  if (s.provider) provider.name = s.provider;
  if (s.model) provider.model = s.model;
  if (s.baseUrl) provider.baseUrl = s.baseUrl;
  if (s.apiKeyEnv) provider.apiKeyEnv = s.apiKeyEnv;
  if (Object.keys(provider).length > 0) out.provider = provider;
  if (isMode(s.mode)) out.mode = s.mode;
  if (Object.keys(s.approvals).length > 0) out.approvals = { ...s.approvals };
  const { provider: extraProvider, ...rest } = extra;
  Object.assign(out, rest);
  if (extraProvider) out.provider = { ...out.provider, ...extraProvider };
  return out;
}

/** didChangeConfigurationParams is the notification's params for settings s. */
export function didChangeConfigurationParams(s: ExtensionSettings, extra?: InitializationOptions): { settings: InitializationOptions } {
  return { settings: initializationOptions(s, extra) };
}

/** restartNeeded says whether a change from a to b needs a new daemon process. */
export function restartNeeded(a: ExtensionSettings, b: ExtensionSettings): boolean {
  return a.path !== b.path;
}
